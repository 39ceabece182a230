// Package hot finds the buckets being written now: a Tracker follows the keys written on
// every master through client tracking (Redis 6+; one RESP2 connection subscribes to
// __redis__:invalidate, another turns on CLIENT TRACKING REDIRECT BCAST), Buckets reads the
// busiest (list --hot), and a Follower hands top the keys written most since its last refresh.
// The server names a key once per event-loop iteration, so counts are a lower bound.
package hot
