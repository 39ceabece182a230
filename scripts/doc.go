// Package scripts holds bucketctl's Lua sources, embedded: the prelude (number.lua), the
// native, multi-tier, reset and read scripts, and other limiters' scripts verbatim with their
// licence and source (third_party/). runbook-test.sh is make test's runbook.
//
// The native bucket is 64 bytes, struct.pack('<c13BddI7I7ddI4'): the tag "bucketctl:v1:",
// last (1: allowed), tokens, ts (µs), allowed, denied, capacity, rate, expires (a Unix second
// before which the TTL of the last SET PX stands; 0 unknown). A native-hash bucket is read and
// converted by the next write; anything else is refused with an error reply (bucket/errors.go).
//
// token_bucket.lua decides one key per call:
//
//	KEYS[1]  the bucket
//	ARGV[1]  capacity in tokens, "" for the stored one
//	ARGV[2]  rate in tokens per second, "" for the stored one
//	ARGV[3]  cost in tokens (>= 0); absent: 1
//	ARGV[4]  now in microseconds (client clock); absent or "": Redis TIME
//	ARGV[5]  "peek" decides without writing (EVALSHA_RO); absent, "" or "take" applies it
//	ARGV[6]  TTL in milliseconds kept after the bucket is full (default 60000)
//	ARGV[7]  "keep" refuses a spec other than the stored one; else a given spec is written
//
// More keys make a batch, decision i (i >= 2) taking ARGV[3i+2..3i+4] as capacity, rate and
// cost, all at one server time. The reply is the record from byte 14 on, '<BddI7I7' (allowed,
// tokens left, ts, counters), plus capacity and rate ('dd') when either came from the bucket;
// a batch replies with an array, a refusal as an error element.
//
// multi_bucket.lua decides several native buckets all or nothing:
//
//	KEYS[1..n]  the tiers' buckets; in a Cluster they share a hash tag (rl:{user42}:user)
//	ARGV[1]     now in microseconds (client clock); "": Redis TIME
//	ARGV[2]     TTL in milliseconds kept after a bucket is full; "": 60000
//	ARGV[3i..3i+2]  tier i's capacity ("" = stored), rate ("" = stored) and cost
//
// Allowed when every tier holds its cost; denied is counted on the tiers lacking theirs. The
// reply: {0, or the first tier lacking its cost, then per tier had_cost, remaining (string),
// retry_after_us (-1 never), reset_after_us, capacity and rate (strings)}.
package scripts
