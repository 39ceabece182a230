// Package hot finds the buckets being written now, without configuring the server: a
// Tracker follows the keys written on every master through client tracking (Redis 6+), and
// Buckets reads the busiest of them as buckets (list --hot); a Follower hands a live view the
// keys written most since its last refresh (top's hot rows).
package hot
