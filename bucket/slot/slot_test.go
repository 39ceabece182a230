package slot_test

import (
	"testing"

	"github.com/bucketctl/bucketctl/bucket/slot"
)

func TestOf(t *testing.T) {
	for key, want := range map[string]int{
		"123456789":        12739, // CRC-16/XMODEM check value 0x31C3
		"":                 0,
		"{user42}:a":       slot.Of("user42"),
		"rl:{user42}:user": slot.Of("user42"),
		"foo{}{bar}":       slot.Of("foo{}{bar}"),
		"foo{{bar}}zap":    slot.Of("{bar"),
		"foo{bar}{zap}":    slot.Of("bar"),
	} {
		if got := slot.Of(key); got != want {
			t.Errorf("Of(%q) = %d, want %d", key, got, want)
		}
	}
	if slot.Of("rl:user42") == slot.Of("rl:global") {
		t.Fatal("untagged test keys should land in different slots")
	}
	for key, want := range map[string]string{"rl:{u}:x": "u", "{}x": "{}x", "a{b": "a{b", "a}{b}": "b"} {
		if got := slot.HashTag(key); got != want {
			t.Errorf("HashTag(%q) = %q, want %q", key, got, want)
		}
	}
}
