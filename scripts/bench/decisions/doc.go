// Command decisions makes a fixed number of rate-limit decisions against one loopback
// redis-server, with bucketctl's Store, with go-redis/redis_rate's Allow, or with floor.lua
// (the native layout's reads and writes with no check: the least a decision on that layout
// costs), for
// scripts/bench/servercost-callgrind.sh: after warming up (script loaded, every key
// written once) it prints "ready" and waits for a line on stdin, then decides and exits, so
// the script can count the server's instructions for exactly those decisions.
package main
