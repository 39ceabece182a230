package loopback

import "testing"

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:6379": true, "localhost:6379": true, "[::1]:6379": true,
		"10.0.0.1:6379": false, "redis.example.com:6379": false, "127.0.0.1": false, "": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}
