// Package format is the one formatting layer: every number, duration, rate and key name a
// person reads, and every number in JSON or YAML, goes through it, one rule per kind of
// value. It imports only the standard library and charmbracelet/x/ansi.
//
// Shown values are cut toward zero (a bucket is 100% full only when it is); waits are
// rounded up. Key names and free text go through SafeKey or SafeText.
package format
