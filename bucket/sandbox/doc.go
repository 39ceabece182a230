// Package sandbox starts a throwaway Redis on a free loopback port, for
// `bucketctl demo`: a real redis-server when one is in PATH, else an
// in-process miniredis.
//
// It also holds the process helpers that the test harness in
// bucket/redistest builds on: FreePort, StartProcess (a child whose output
// goes to a log file, killed with us on Linux) and StartRedis (redis-server
// on a free loopback port, ready when it returns, retried on a port race).
package sandbox
