// Command screenshots draws the README's pictures from the real bucketctl: it runs the
// binary on pseudo-terminals against the demo's sandbox, replays what it drew
// (tui/termtest) and writes each screen as an SVG. `make screenshots` builds bin/bucketctl
// and runs it; a test runs every picture's command, so a picture cannot outlive it.
//
// Usage:
//
//	go run ./scripts/screenshots --bin bin/bucketctl --out scripts/screenshots
package main
