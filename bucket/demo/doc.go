// Package demo is the traffic of bucketctl's demo: bucketctl's own buckets, and buckets of
// every other application layout bucketctl reads, each driven by that application's own
// limiter (its Lua script as its article gives it, its clock, its TTL), so every row of
// the demo moves as it would in production.
package demo
