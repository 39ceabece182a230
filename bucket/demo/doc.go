// Package demo is the traffic of bucketctl's demo: bucketctl's own buckets, and buckets of
// every other layout bucketctl reads, each driven by that application's own limiter.
package demo
