// Command loadfloor is the floor against which `bucketctl load` is measured: -c
// connections, each sending EVALSHA SHA 1 KEY ARG... in a closed loop, -P commands a round
// trip, until -n decisions, with nothing else: no decision is read back, no latency kept.
// -client go-redis sends them with go-redis on pinned RESP2 connections (as load's workers
// do), -client resp writes the command's bytes and skips each reply by hand. It prints the
// decisions per second. Loopback servers only.
//
//	go run ./scripts/bench/loadfloor -addr 127.0.0.1:6379 -sha SHA -client resp rate:k 1e15 1e15 1
package main
