// Package tui holds bucketctl's bubbletea screens: Watch (one bucket), Top (the dashboard
// of many) and Load (a load run's live view, and its printed report). The screens never
// talk to Redis: each takes a source and gets its data as messages.
//
// live.go is what the polling screens share; bucketview.go and chart*.go draw one bucket;
// top_*.go are the dashboard, load*.go the load screens; keys.go holds the bindings and
// help, styles.go the colours, text.go the fitting of text to cells. Every number and key
// shown goes through package format.
package tui
