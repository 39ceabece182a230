// Command gen writes bucketctl's generated files: the shell completions (committed in
// completions/, rewritten by `make gen`) and one man page per command (made at release
// time by GoReleaser's before-hook).
//
// It is a program of its own, not a hidden bucketctl command, so that the man-page
// renderer (cobra/doc and its markdown library) is not linked into bucketctl, where every
// package's init runs on every command.
//
// Usage:
//
//	go run ./scripts/gen --dir DIR [--man=false] [--man-date YYYY-MM-DD] [--man-version V] [--man-gzip]
package main
