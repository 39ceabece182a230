// Package scripts holds bucketctl's Lua sources, embedded into the binary: the native
// token-bucket script, the multi-tier and reset scripts, the read script, the prelude with
// the one number grammar they share, and the other applications' own scripts, verbatim
// (third_party/apps/, and third_party/NAME/ for a limiter published as a project, with its
// licence and source). The other sub-directories are programs of the repository
// (benchmarks, generated files, pictures); runbook-test.sh is the runbook that make test
// runs end to end (cmd's TestRunbookScript).
//
// # The native bucket (number.lua)
//
// One string of 64 bytes, struct.pack('<c13BddI7I7ddI4'): the tag "bucketctl:v1:", last
// (1: it allowed), tokens, ts (µs), allowed, denied, capacity, rate, expires (a Unix second
// before which the last SET PX's TTL stands; 0 unknown). A decision rewrites bytes 14 to 44
// (last to denied) in place while its spec and TTL stand. A hash of the layout written before
// (native-hash: tokens, ts, capacity, rate, allowed, denied) is read, and converted by the
// next write. Anything else is refused untouched, with an error reply bucket/errors.go reads.
//
// # token_bucket.lua: one atomic decision per key
//
//	KEYS[1]  the bucket
//	ARGV[1]  capacity in tokens, or "" for the stored one
//	ARGV[2]  refill rate in tokens per second, or "" for the stored one
//	ARGV[3]  cost in tokens (>= 0); absent: 1
//	ARGV[4]  now in microseconds (client clock); absent or "": Redis TIME
//	ARGV[5]  "peek" computes the decision only (run it with EVALSHA_RO); absent, "" or "take" applies it
//	ARGV[6]  extra TTL in milliseconds kept after the bucket is full (default 60000)
//	ARGV[7]  "keep" refuses a capacity or rate other than the stored spec (naming it); absent
//	         or "": a given spec is written into the bucket
//
// KEYS[2..n] with ARGV[3i+2], ARGV[3i+3], ARGV[3i+4] (capacity, rate, cost of decision i)
// make a batch: each decided as if alone, in order, at one server time, ARGV[4..7] holding for
// all; a batch gives every capacity and rate.
//
// The reply is the decision's record as the bucket stores it from byte 14 on, '<BddI7I7':
// allowed (1|0), tokens left, ts, the allowed and denied counters after it; then capacity and
// rate ('dd') when either came from the bucket. bucket/script.go derives the waits. A batch
// replies with an array of those, a refused decision being an error element. Invalid
// arguments, a key that is not a native bucket or a corrupt one give an error reply and
// write nothing (a lone decision's capacity or rate that is no number raises Lua's error).
//
// A decision is TIME, GET and one write, on deny too (the counter, and ts never goes stale):
// SET PX when the bucket is new, its spec changed, the clock is the client's or the stored
// expires does not cover the time to full plus the grace (then half the grace again is
// added); else SETRANGE of the record, which keeps the TTL. A cost above capacity is denied
// without a write. The hot path is written for the server's cost (see help design).
//
// # multi_bucket.lua: one all-or-nothing decision over several native buckets
//
//	KEYS[1..n]  the tiers' buckets; in a Cluster they share a hash tag (rl:{user42}:user)
//	ARGV[1]     now in microseconds (client clock); "": Redis TIME
//	ARGV[2]     extra TTL in milliseconds kept after a bucket is full; "": 60000
//	ARGV[3i], ARGV[3i+1], ARGV[3i+2]  tier i's capacity ("" = stored), rate ("" = stored), cost
//
// Every tier is refilled to now as token_bucket.lua does. The request is allowed only when
// every tier holds its cost: then the cost is taken and allowed counted on every tier; on a
// deny nothing is taken and denied is counted on the tiers that lacked their cost. Every tier
// is written back (SET PX) at its level and new ts, unless a tier's cost exceeds its capacity:
// then nothing is written. The reply is {denied (0, or the first tier lacking its cost), then
// per tier: had_cost (0|1), remaining tokens after the decision (string), retry_after_us (-1
// never), reset_after_us, capacity (string), rate (string)}. Invalid arguments give an error
// reply naming the tier and write nothing.
package scripts
