// Command benchtable reads `go test -bench 'Take$|ServerCost'` output (./bucket) on stdin,
// echoes it, and prints the comparison table of the README's Performance section: the
// server's script time per decision, bucketctl against go-redis/redis_rate (INFO
// commandstats, medians of three interleaved runs), and the side-by-side Take against
// redis_rate.Allow (ratio = redis_rate's ns/op ÷ bucketctl's: above 1, bucketctl decides
// faster).
//
//	go test ./bucket -run NONE -bench 'Take$|ServerCost' | go run ./scripts/bench/benchtable
package main
