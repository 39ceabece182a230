// Package audit finds what is wrong with the buckets in a Redis over the pages of a scan,
// in bounded memory: findings with examples, families of keys by prefix with their layouts,
// and memory estimated from sampled MEMORY USAGE replies.
package audit
