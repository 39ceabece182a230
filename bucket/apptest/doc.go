// Package apptest holds, for tests, the bucket algorithms of the applications whose layouts
// bucketctl reads: each application's own script, arguments and clock, so tests write and
// decide buckets exactly as those applications do.
package apptest
