package tui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
)

func TestTruncMiddle(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"rl:{tenant-4711}:route:/api/v1/orders", 40, "rl:{tenant-4711}:route:/api/v1/orders"},
		{"rl:{tenant-4711}:route:/api/v1/orders", 26, "rl:{tenant-4…api/v1/orders"},
		{"rl:{tenant-4711}:route:/api/v1/users", 26, "rl:{tenant-4…/api/v1/users"},
		{"日本語のキー:末尾", 9, "日本…末尾"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	} {
		got := TruncMiddle(c.in, c.w)
		if got != c.want {
			t.Errorf("TruncMiddle(%q, %d) = %q, want %q", c.in, c.w, got, c.want)
		}
		if w := ansi.StringWidth(got); w > c.w {
			t.Errorf("TruncMiddle(%q, %d) is %d cells wide", c.in, c.w, w)
		}
	}
}
