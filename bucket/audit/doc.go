// Package audit finds what is wrong with the buckets in a Redis, over the pages of the
// streaming scan (scan.States) with bounded memory: counts, a few example keys per
// finding, families of keys (by prefix) with their layouts, and memory estimated from a
// bounded number of sampled MEMORY USAGE replies (memory.go).
package audit
