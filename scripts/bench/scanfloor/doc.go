// Command scanfloor is the floor of reading many keys with go-redis, against which
// `bucketctl list` is measured: SCAN MATCH -match COUNT 500 (as list's first pages), one
// pipelined GET of every key of a page, and one line per key written out (the key and its
// value's length), a page at a time, so memory stays at a page. It decides nothing, checks
// nothing and formats nothing else. Loopback servers only.
//
//	go run ./scripts/bench/scanfloor -addr 127.0.0.1:6379 -match 'rate:*' > /dev/null
package main
