package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

func TestFamilyOf(t *testing.T) {
	for _, c := range []struct {
		key   string
		depth int
		want  string
	}{
		{"rate:user:42", 0, "rate:user"},
		{"rate:user:42", 1, "rate"},
		{"rate:user:42", 2, "rate:user"},
		{"rate:user:42", 5, "rate:user"},
		{"{t:9}:rate:user:1", 0, "{t:9}:rate:user"},
		{"plain", 0, ""},
		{"plain", 2, ""},
	} {
		if got := FamilyOf(c.key, c.depth); got != c.want {
			t.Errorf("FamilyOf(%q, %d) = %q, want %q", c.key, c.depth, got, c.want)
		}
	}
}

func bucketState(key string, l bucket.Layout, tokens float64, ttl time.Duration) bucket.State {
	now := time.Now().UnixMicro()
	return bucket.State{Key: key, Type: "hash", Exists: true, Layout: l, Now: now,
		Spec: bucket.Spec{Capacity: 10, Rate: 1}, Stored: bucket.Level{Tokens: tokens, TS: now}, Tokens: min(tokens, 10), TTL: ttl}
}

// The auditor bounds what it keeps: examples per finding, samples in all, families (the
// rest under "(other)"); hot-slot needs HotSlotMin buckets, half of them in one slot.
func TestAuditorBounds(t *testing.T) {
	a := New(Options{Examples: 2, Samples: 1, MaxSamples: 3, MaxFamilies: 2, HotSlotMin: 4, Cluster: true})
	express := bucket.Presets["express"]
	var page []bucket.State
	for i := 0; i < 4; i++ {
		page = append(page, bucketState(fmt.Sprintf("{hot}:f:%d", i), express, 5, -1))
		page = append(page, bucketState(fmt.Sprintf("a%d:x", i), express, 5, time.Hour))
	}
	probes := a.Add(page)
	if len(probes) != 3 {
		t.Fatalf("want MaxSamples 3 probes, got %d", len(probes))
	}
	for i := range probes {
		probes[i].Bytes = 100
	}
	a.AddMemory(probes)
	r := a.Report()
	var noTTL, hot *Finding
	for i := range r.Findings {
		switch r.Findings[i].Kind {
		case FindingNoTTL:
			noTTL = &r.Findings[i]
		case FindingHotSlot:
			hot = &r.Findings[i]
		}
	}
	if noTTL == nil || noTTL.Count != 4 || len(noTTL.Examples) != 2 || noTTL.Memory != 400 {
		t.Fatalf("no-ttl: want 4 with 2 examples and ~400 B, got %+v", noTTL)
	}
	if hot == nil || hot.Count != 1 || hot.Examples[0] != "{hot}:f" {
		t.Fatalf("hot-slot: want family {hot}:f, got %+v", hot)
	}
	fams := map[string]Family{}
	for _, f := range r.Families {
		fams[f.Prefix] = f
	}
	if len(fams) != 3 || fams[OtherFamilies].Keys != 3 || fams["a0"].Keys != 1 {
		t.Fatalf("want 2 families and the later ones under %s: %+v", OtherFamilies, r.Families)
	}
	if r.Worst() != Warning {
		t.Fatalf("worst: %s", r.Worst())
	}
}

// A TTL short of the time to full is an over-grant, except within the slack of the layout
// (throttled rounds its TTL down by up to 1 s by design).
func TestAuditTTLShort(t *testing.T) {
	a := New(Options{})
	st := bucketState("k", bucket.Presets["express"], 5, 2*time.Second) // 5 s to full
	if got := a.kinds(st); len(got) != 1 || got[0] != FindingTTLShort {
		t.Fatalf("express 5 s to full, TTL 2 s: %v", got)
	}
	st.TTL = 5 * time.Second
	if got := a.kinds(st); len(got) != 0 {
		t.Fatalf("TTL = time to full: %v", got)
	}
	st.Stored.Tokens, st.Tokens = 12, 10
	if got := a.kinds(st); len(got) != 1 || got[0] != FindingOverCapacity {
		t.Fatalf("12 tokens of 10: %v", got)
	}
	if ttlSlack(bucket.Presets["throttled"]) <= time.Second || ttlSlack(bucket.Presets["redis-rate"]) >= time.Second {
		t.Fatalf("slack: throttled %s, redis-rate %s", ttlSlack(bucket.Presets["throttled"]), ttlSlack(bucket.Presets["redis-rate"]))
	}
}

// TestSuggestRuleTwoKey: the rule suggested for a guessed two-key bucket matches its
// layout's tokens keys, never every key.
func TestSuggestRuleTwoKey(t *testing.T) {
	s := bucket.State{Key: "request_rate_limiter.{r.u1}.tokens", Layout: bucket.Presets["spring-cloud-gateway"]}
	if got := SuggestRule(s); !strings.Contains(got, `match: "request_rate_limiter.*.tokens", layout: spring-cloud-gateway`) {
		t.Fatalf("SuggestRule: %s", got)
	}
	s = bucket.State{Key: "wm:u1", Layout: bucket.Presets["webman"]}
	if got := SuggestRule(s); !strings.Contains(got, `match: "wm:*", layout: webman`) {
		t.Fatalf("SuggestRule: %s", got)
	}
}
