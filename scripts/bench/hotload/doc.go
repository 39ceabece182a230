// Command hotload writes, at steady rates, what the hot-bucket benchmark needs: decisions on a
// native bucket (bucketctl's script), decisions of the express application on a bucket of its
// layout (its own script), and light noise (SETs on random session keys). It runs for
// -duration and stops by itself; loopback servers only.
//
//	go run ./scripts/bench/hotload -addr 127.0.0.1:6379 -native rate:user:4242 -native-rate 1500 \
//	    -other ex:ip:777 -other-rate 500 -noise-rate 100 -duration 30s
package main
