// Package redistest starts real redis-server processes for tests: standalone
// servers (optionally with a password, ACL users, TLS or as a replica), a Redis
// Cluster with replicas, and a Sentinel setup. It is imported by tests only.
//
// Every process listens on 127.0.0.1 on a free port, runs without
// persistence (--save "" --appendonly no), logs to a file in the test's temp
// dir and is stopped in t.Cleanup, also when the test fails half way; on
// Linux the kernel kills it if the test binary dies. Every wait is polled and
// bounded. When a helper fails it quotes the tail of the logs involved, and
// when a test fails the cleanup logs the tail of every server's log.
//
// redis-server must be in PATH: without it the helpers fail the test (they
// never skip it); it must be Redis 7.0 or newer. Data nodes also run with
// --repl-diskless-sync-delay 0 (a replica syncs at once instead of after
// 5 s), --shutdown-timeout 0 (SIGTERM does not wait for lagging replicas) and
// --enable-debug-command local (DEBUG SLEEP and friends, for tests of slow
// servers).
package redistest
