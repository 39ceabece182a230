// Package slot is where Redis Cluster puts a key: Of is the hash slot, as CLUSTER KEYSLOT
// computes it (CRC16 of the key's hash tag, modulo 16384); HashTag is the part of the key
// that is hashed, which a Ring shards by too. The keys one script call touches must share a
// slot.
package slot
