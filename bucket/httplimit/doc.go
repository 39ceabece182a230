// Package httplimit is net/http middleware that rate-limits requests with bucketctl's token
// buckets in Redis: one or several tiers per request decided all or nothing in one round
// trip (bucket.Store.TakeAll), rate-limit headers on every response, and an explicit policy
// with a circuit breaker for when Redis is unreachable.
//
// Each request is charged to a partition P named by a KeyFunc (UserHeader, UserContext,
// APIKeyHeader, ClientIP, or FirstOf several). Tier T's bucket is Prefix + "{P}:T", plus
// ":" + Scope(r) when the tier has a Scope (rl:{user:42}:route:POST /reports): the hash tag
// puts all tiers of a request in one Cluster slot, as one script call needs.
//
// Every response carries the fields of draft-ietf-httpapi-ratelimit-headers-11, one item
// per tier:
//
//	RateLimit-Policy: "user";q=100;w=10, "route";q=20;w=60
//	RateLimit: "user";r=97;t=1, "route";r=19;t=3
//
// q is the capacity, w the seconds an empty bucket takes to refill (rounded up), r the whole
// tokens left after this request, t the seconds until the bucket is full again (rounded up).
// X-RateLimit-Limit, -Remaining and -Reset (Unix seconds) describe the tier closest to
// denying (on a 429, the one with the longest wait; else the fewest tokens left). A 429 adds
// Retry-After, the seconds until every tier holds the cost again, and an
// application/problem+json body of the "quota-exceeded" type naming the tiers that lacked
// it. When no bucket was consulted only RateLimit-Policy is sent.
//
// Config.OnFailure has no default: FailOpen lets requests through, FailClosed refuses them
// (503, or 429), FailLocal decides them with bounded in-process buckets. After
// Breaker.Threshold consecutive Redis errors the breaker opens: for Breaker.Cooldown the
// policy answers at once, then one probe request calls Redis and closes it on success.
// Errors that say nothing about Redis's health (a key that is not a native bucket, keys in
// different slots) never open it and answer 500.
package httplimit
