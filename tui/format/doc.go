// Package format is the one formatting layer: every number, duration, rate and key name a
// person reads (tables, lines, error messages, TUI views) and every number a runbook reads
// in JSON or YAML goes through it, one rule per kind of value, so a bucket reads the same
// in every command. It imports only the standard library and charmbracelet/x/ansi, so
// commands that draw nothing can use it.
//
// Shown values are cut toward zero to what is shown (a level is never shown above what the
// bucket holds, a bucket 100% full only when it is); waits are rounded up (a retry-after
// read short retries too early). Key names and free text go through SafeKey or SafeText:
// nothing a terminal would interpret. JSON values: the JSON* functions in json.go.
package format
