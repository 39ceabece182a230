// Package hot finds the buckets being written now, without configuring the server: a
// Tracker follows the keys written on every master through client tracking (Redis 6+),
// Buckets reads the busiest as buckets (list --hot), and a Follower hands a live view the
// keys written most since its last refresh (top's hot rows).
//
// On every master one connection subscribes to __redis__:invalidate (RESP2) and a second
// turns on CLIENT TRACKING on REDIRECT <first> BCAST [PREFIX p ...]: the server names the
// keys written, once per event-loop iteration, so the counts are a lower bound of the writes.
package hot
