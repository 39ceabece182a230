// Command benchtable reads the output of `make bench`'s commands on stdin, echoes it, and
// ends with the comparison table of the README's Performance section, headed by the date,
// the cores and the load average the scripts printed around their runs:
//   - the server's script time per decision, bucketctl against go-redis/redis_rate (INFO
//     commandstats, medians of three interleaved runs; go test ./bucket -bench ServerCost);
//   - the side-by-side Take against redis_rate.Allow (ratio = redis_rate's ns/op ÷
//     bucketctl's: above 1, bucketctl decides faster; go test ./bucket -bench 'Take$');
//   - `bucketctl load` against redis-benchmark, -P 1 and -P 16
//     (scripts/bench/load-vs-redis-benchmark.sh; pairs in which the host took CPU time, steal, are not counted);
//   - package initialisation and `inspect KEY` against redis-cli (scripts/bench/startup.sh);
//   - `list` of 1,000,000 native buckets against SCAN + pipelined GET
//     (scripts/bench/list-vs-floor.sh).
//
// Each row says its goal; a figure that misses it is reported under the table. A figure
// that is absent (its command failed) makes benchtable exit 1, naming it.
//
//	make bench
package main
