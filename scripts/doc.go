// Package scripts holds bucketctl's Lua, embedded: the prelude (number.lua), the native,
// multi-tier, reset and read scripts, and other limiters' scripts verbatim with their licence
// and source (third_party/). runbook-test.sh is make test's runbook.
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
// multi_bucket.lua decides several native buckets all or nothing. KEYS: the tiers' buckets
// (in a Cluster they share a hash tag); ARGV[1] and ARGV[2] are token_bucket.lua's ARGV[4]
// and ARGV[6], ARGV[3i..3i+2] tier i's capacity and rate ("" = stored) and cost. Allowed
// when every tier holds its cost: it is taken and allowed counted everywhere; denied is counted
// on the tiers lacking it. Every tier is written (SET PX) unless a cost exceeds its capacity.
// The reply: {0, or the first tier lacking its cost, then per tier had_cost, remaining
// (string), retry_after_us (-1 never), reset_after_us, capacity and rate (strings)}.
// Invalid arguments give an error reply and write nothing.
//
// read.lua reads one key, writing nothing: KEYS[1] the key, KEYS[2..n] the keys that may pair
// with it in a two-key layout (same slot). A hash of more than ARGV[1] fields or a string
// longer than ARGV[2] is answered with its size alone. The reply: {type, pttl, HLEN or STRLEN
// (else 0), HGETALL flat | the string | false, then per KEYS[2..n] its value when a short
// string, else false}.
//
// reset.lua deletes or sets one bucket of any layout (KEYS: the layout's keys), only while they
// still hold a bucket of that layout (bucket/shape.go's rule). Its arguments, "" when absent:
//
//	ARGV[1]     "delete" or "set"
//	ARGV[2]     the type: tagged, hash, strings, json, mennanov-keys or gcra
//	ARGV[3,4]   tokens and time fields (gcra: the least number of its form, its epoch in s)
//	ARGV[5,6]   other required and optional fields, comma-separated (gcra: TTL bounds, µs)
//	ARGV[7]     the tokens to write (json: whole; gcra: the TAT)
//	ARGV[8,9]   the time unit (s, ms, us, ns), and "1" for a float time
//	ARGV[10]    TTL in ms, the least kept, "" keeps it (tagged: the grace, "" 60000; gcra: set)
//	ARGV[11]    now in microseconds; "": Redis TIME
//	ARGV[12]    "0" writes now over a later stored time (gcra: the first number beyond its form)
//	ARGV[13]    "" undeclared, else the most a lone level holds ("0": none), two-key ",lo,hi" PTTL ms
//	ARGV[14]    "respec" writes the spec into an existing bucket too
//	ARGV[15]    "time-first": a hash written anew, time first
//	ARGV[16..]  spec field pairs (tagged: ARGV[15..18] "capacity", C, "rate", R)
//
// mennanov-keys' KEYS[3], if given, is the version counter, incremented where it exists. The
// reply: 1 reset, 2 created, 0 no key; left untouched: -1 not a bucket of the layout, -2
// corrupt, -3 no layout declared for it (bucket.ResetOutcome).
package scripts
