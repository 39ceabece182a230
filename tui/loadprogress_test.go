package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
)

// "last second" is the last complete second: at 2.01s, the one from 1s to 2s.
func TestLoadProgressLineLastSecond(t *testing.T) {
	secs := []load.Second{{Allowed: 30, Denied: 100}, {Allowed: 10, Denied: 200}, {Allowed: 7, Denied: 300}}
	s := load.Snapshot{Spec: bucket.Spec{Capacity: 20, Rate: 10}, Duration: 4 * time.Second, Running: true,
		Elapsed: 2*time.Second + 10*time.Millisecond, PerSecond: secs}
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{time.Second + 10*time.Millisecond, "last second 30/s allowed, 100/s denied"},
		{2*time.Second + 10*time.Millisecond, "last second 10/s allowed, 200/s denied"},
		{3*time.Second + 10*time.Millisecond, "last second 7/s allowed, 300/s denied"},
	} {
		s.Elapsed = c.at
		if got := LoadProgressLine(s); !strings.Contains(got, c.want) {
			t.Errorf("at %v: %q, want %q", c.at, got, c.want)
		}
	}
	s.Elapsed = 900 * time.Millisecond
	if got := LoadProgressLine(s); strings.Contains(got, "last second") {
		t.Errorf("before a whole second: %q", got)
	}
}
