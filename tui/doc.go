// Package tui holds bucketctl's bubbletea screens: Watch (one bucket), Top (the dashboard
// of many) and Load (a load run's live view, and its printed report). The screens never
// talk to Redis: each takes a small source (a function or an interface) and receives its
// data as messages.
//
// The parts: live.go is what every polling screen shares (options, header, poller, error
// banner); bucketview.go and chart.go draw one bucket (watch, and top's detail pane);
// top_*.go split the dashboard into model, keys, sort, table and view; load*.go the load
// screens. Every screen has its own keymap implementing help.KeyMap; the bindings they
// share are in keys.go. Styles (styles.go) is built once from one renderer, so the colour
// profile and NO_COLOR are decided in one place. Every number and key shown goes through
// package format; cells.go and wrap.go fit it to columns and lines by display width.
package tui
