package cmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// TestCheckTokensAreTheLevelBefore: consume's JSON tokens is the level left after its
// decision, check's the level now, before the decision it would make (it takes nothing).
func TestCheckTokensAreTheLevelBefore(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	url := srv.URL()
	tokens := func(r result) float64 {
		t.Helper()
		var v struct{ Tokens float64 }
		if err := json.Unmarshal([]byte(r.out), &v); err != nil {
			t.Fatalf("exit %d %v: %s %s", r.code, err, r.out, r.errOut)
		}
		return v.Tokens
	}
	if got := tokens(run(t, url, "consume", "k", "--capacity", "10", "--rate", "0.001", "--cost", "3", "-o", "json")); got != 7 {
		t.Fatalf("consume 3 of 10: tokens %v, want 7 (after)", got)
	}
	if got := tokens(run(t, url, "check", "k", "--cost", "2", "-o", "json")); got != 7 {
		t.Fatalf("check 2 at 7: tokens %v, want 7 (before: a check takes nothing)", got)
	}
}

// TestGCRAGuessShowsNoWrongLevel: an undeclared redis_rate bucket at 9 of 10 has no spec,
// and its TAT alone says no level: list and inspect show "?", never "0 (stored)", and its
// JSON stored_tokens is null.
func TestGCRAGuessShowsNoWrongLevel(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	url := srv.URL()
	g := redisRateLib(t, c, "guess:1", 1, 10, time.Hour)
	g.take(1)
	for _, args := range [][]string{{"list", "--match", "rate:*"}, {"inspect", g.key}} {
		r := run(t, url, args...)
		line := lineOf(r.out, g.key)
		if !strings.Contains(line, "redis-rate?") || !strings.Contains(line, output.UnknownTAT) || strings.Contains(line, "(stored)") {
			t.Errorf("%s: %q, want the guess with tokens %q", args[0], line, output.UnknownTAT)
		}
	}
	r := run(t, url, "inspect", g.key, "-o", "json")
	var v map[string]any
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("inspect -o json: %v %s", err, r.out)
	}
	if st, ok := v["stored_tokens"]; !ok || st != nil || v["tokens"] != nil {
		t.Fatalf("inspect -o json of a GCRA guess: stored_tokens %v, tokens %v; want both null", st, v["tokens"])
	}
	// With its spec the level is known: 9 of 10.
	r = run(t, url, "inspect", g.key, "--layout", "redis-rate", "--capacity", "10", "--rate", "1/h")
	if line := lineOf(r.out, g.key); !strings.Contains(line, " 9 ") {
		t.Errorf("with its spec: %q, want 9 tokens", line)
	}
}
