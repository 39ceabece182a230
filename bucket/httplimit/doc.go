// Package httplimit is net/http middleware that rate-limits requests with bucketctl's token
// buckets in Redis: one or several tiers per request decided all or nothing in one round
// trip (bucket.Store.TakeAll), the RateLimit-Policy, RateLimit (draft-ietf-httpapi-ratelimit-
// headers-11) and X-RateLimit-* fields on every response, and an explicit failure policy with
// a circuit breaker for when Redis is unreachable. Tier T of partition P (a KeyFunc's id) is
// the bucket Prefix + "{P}:T" [+ ":" + Scope(r)]: a request's tiers share one Cluster slot.
// 'bucketctl help library' describes the fields and the policies.
package httplimit
