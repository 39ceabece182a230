// Package httplimit is net/http middleware that rate-limits requests with bucketctl's token
// buckets in Redis: one or several tiers per request (a user's overall bucket, a bucket per
// route, …) decided all or nothing in one round trip with bucket.Store.TakeAll, rate-limit
// headers on every response, and an explicit policy with a circuit breaker for when Redis
// is unreachable.
//
// # Keys
//
// Each request is charged to a partition, named by a KeyFunc (UserHeader, UserContext,
// APIKeyHeader, ClientIP, or FirstOf several). The bucket of tier T for partition P is
// Prefix + "{P}:T", with ":" + Scope(r) appended when the tier has a Scope: for example
// rl:{user:42}:user and rl:{user:42}:route:POST /reports. The braces make P the key's hash
// tag, so all tiers of a request share one Redis Cluster slot, as one script call needs.
//
// # Headers
//
// Every response carries the fields of the IETF draft "RateLimit header fields for HTTP",
// draft-ietf-httpapi-ratelimit-headers-11 (23 May 2026), one list item per tier, named
// after the tier:
//
//	RateLimit-Policy: "user";q=100;w=10, "route";q=20;w=60
//	RateLimit: "user";r=97;t=1, "route";r=19;t=3
//
// q is the tier's capacity (whole tokens), w the seconds an empty bucket takes to refill
// fully (capacity / rate, rounded up), r the whole tokens remaining after this request,
// and t the seconds until the bucket is full again (rounded up). A token bucket refills
// continuously, so more than r tokens become available before t: t is when the client's
// quota is whole again, not a window boundary. On a 429 the Retry-After field, which the
// draft says clients must prefer to t, gives the earliest useful retry.
//
// The legacy fields describe the tier closest to denying (on a 429, the tier that needs the
// longest wait; otherwise the one with the fewest whole tokens left):
//
//	X-RateLimit-Limit      its capacity in tokens
//	X-RateLimit-Remaining  its tokens left after this request, rounded down
//	X-RateLimit-Reset      Unix time in seconds, rounded up, when it is full again
//
// A 429 adds Retry-After: the seconds, rounded up, until every tier holds this request's
// cost again, so never before a retry can succeed; and a small application/problem+json
// body of the draft's "quota-exceeded" problem type listing the tiers that lacked their
// cost. When no bucket was consulted (FailOpen, FailClosed) only RateLimit-Policy is sent.
//
// # When Redis is unreachable
//
// Config.OnFailure must be chosen, there is no default: FailOpen lets requests through
// unlimited, FailClosed refuses them (503 by default, or 429), FailLocal decides them with
// in-process buckets per key (the same model, bounded in size). A circuit breaker opens
// after Breaker.Threshold consecutive Redis errors: for Breaker.Cooldown no request calls
// Redis and the failure policy answers at once; then a single probe request calls Redis
// and closes the breaker when it succeeds. Errors that say nothing about Redis's health
// (a key that is not a native bucket, keys in different Cluster slots) never open it and
// answer 500.
package httplimit
