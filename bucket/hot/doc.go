// Package hot finds the buckets being written now, without configuring the server: a
// Tracker follows the keys written on every master through client tracking (Redis 6+), and
// Buckets reads the busiest of them as buckets (list --hot); a Follower hands a live view the
// keys written most since its last refresh (top's hot rows, read by the watchlist whatever
// its scan has reached).
//
// On every master, one connection subscribes to __redis__:invalidate (RESP2) and a second
// turns on CLIENT TRACKING on REDIRECT <first> BCAST [PREFIX p ...]: the server then names
// the keys written under the prefixes, once per event-loop iteration, so the counts are a
// lower bound of the writes that ranks keys (the native counters give decisions per
// second). No CONFIG SET, keyspace notifications or MONITOR; closing the connections ends
// the tracking.
package hot
