package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// topicFills are the parts of the help made from the layout registry, by placeholder.
var topicFills = map[string]func() string{
	"{{presets}}":  layoutTable,
	"{{fidelity}}": fidelityTable,
}

func fillTopic(s string) string {
	for mark, fill := range topicFills {
		if strings.Contains(s, mark) {
			s = strings.ReplaceAll(s, mark, strings.TrimRight(fill(), "\n"))
		}
	}
	return s
}

func layoutTable() string {
	var b strings.Builder
	w := nameWidth(0)
	for _, n := range bucket.PresetNames() {
		writeRow(&b, w, n, bucket.Presets[n].About)
	}
	return b.String()
}

func nameWidth(least int) int {
	for _, l := range bucket.Registry() {
		least = max(least, len(l.Name))
	}
	return least
}

// fidelityTable lists each preset's clock, time step, and what a stored time ahead does.
func fidelityTable() string {
	w := nameWidth(len("layout"))
	var b strings.Builder
	fmt.Fprintf(&b, "  %-*s  %-28s %s\n", w, "layout", "clock, step", "stored time ahead of the clock")
	for _, n := range bucket.PresetNames() {
		l := bucket.Presets[n]
		clock := "Redis TIME"
		if l.ClientClock() {
			clock = "client"
		}
		ahead := "no refill until then"
		switch {
		case l.Type == bucket.GCRA:
			ahead = "the library's TAT arithmetic"
		case !l.KeepsLaterTime():
			ahead = "refills negatively"
		}
		fmt.Fprintf(&b, "  %-*s  %-28s %s\n", w, n, clock+", "+stepText(l.Step()), ahead)
	}
	return b.String()
}

func stepText(d time.Duration) string {
	switch {
	case d >= time.Second && d%time.Second == 0:
		return "whole seconds"
	case d >= time.Millisecond && d%time.Millisecond == 0:
		return fmt.Sprintf("%d ms", d/time.Millisecond)
	}
	return fmt.Sprintf("%d µs", d/time.Microsecond)
}

// writeRow writes "  NAME  TEXT", TEXT wrapped at 80 columns under itself.
func writeRow(b *strings.Builder, w int, name, text string) {
	indent := 2 + w + 2
	line := fmt.Sprintf("  %-*s  ", w, name)
	for i, word := range strings.Fields(text) {
		if i > 0 && len(line)+1+len([]rune(word)) > 80 {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = strings.Repeat(" ", indent)
		} else if i > 0 {
			line += " "
		}
		line += word
	}
	b.WriteString(line + "\n")
}
