// Package slot is where Redis Cluster puts a key: Of is its hash slot, HashTag the part of
// it hashed (a Ring shards by it too).
package slot
