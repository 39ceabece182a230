// Package tui holds bucketctl's bubbletea screens: Watch (one bucket), Top (the dashboard
// of many) and Load (a load run's live view, and its printed report). The screens never
// talk to Redis: each takes a source (a function or an interface) and gets its data as
// messages.
//
// live.go is what the polling screens share (options, polling, header, error banner);
// bucketview.go and chart.go draw one bucket (watch, and top's detail pane); top_*.go are
// the dashboard's model, keys, sort, table and view; load*.go the load screens. keys.go
// holds the shared bindings and help, styles.go the styles of one colour profile, and
// cells.go and wrap.go fit text to columns and lines by display width. Every number and
// key shown goes through package format.
package tui
