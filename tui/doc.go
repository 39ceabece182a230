// Package tui holds bucketctl's bubbletea screens: the one-bucket watch view, the top
// dashboard and the load test's live view. The screens never talk to Redis: each takes a
// small source (a function or an interface) and receives its data as messages.
package tui
