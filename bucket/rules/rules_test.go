package rules_test

import (
	"context"
	"errors"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/bucket/rules"
)

// globCases are patterns and keys on which the rules' glob agrees with Redis's MATCH.
var globCases = []struct {
	glob, key string
	want      bool
}{
	{"rate:user:*", "rate:user:42", true},
	{"rate:user:*", "rate:users", false},
	{"rate:user:*", "rate:user:", true},
	{"rate:?", "rate:a", true},
	{"rate:?", "rate:ab", false},
	{"h*llo", "hllo", true},
	{"h?llo", "hllo", false},
	{"rate:[ab]", "rate:a", true},
	{"rate:[ab]", "rate:c", false},
	{"rate:[^ab]", "rate:c", true},
	{"rate:[^ab]", "rate:b", false},
	{"rate:[a-c]x", "rate:bx", true},
	{"rate:[a-c]x", "rate:dx", false},
	{`a\*b`, "a*b", true},
	{`a\*b`, "axb", false},
	{`a\?b`, "a?b", true},
	{`a\\b`, `a\b`, true},
	{"/api/*", "/api/products/hot", true},
	{"rl:*", "xrl:1", false},
	{"*:{u1}:*", "rl:{u1}:user", true},
	{"a.b", "axb", false},
	{"a.b", "a.b", true},
	{"a+", "aa", false},
	{"(x)|y", "(x)|y", true},
	{"^a$", "^a$", true},
	{"^a$", "a", false},
	{"rate:ünï*", "rate:ünïcode", true},
	{"rate:*", "rate:a\nb", true},
	{"a?b", "aüb", false}, // ü is two bytes: ? is one
	{"a??b", "aüb", true},
	{"rate:[é]", "rate:é", false},
	{"*", "", true},
	{"a*", "a", true},
	{"*b*", "abc", true},
	{"[", "[", false},
	{"x[ab", "xa", true},
}

func compile(t *testing.T, rs ...rules.Rule) *rules.Table {
	t.Helper()
	table, err := rules.New(rs)
	if err != nil {
		t.Fatalf("NewRules: %v", err)
	}
	return table
}

func TestRulesGlob(t *testing.T) {
	for _, tc := range globCases {
		_, got := compile(t, rules.Rule{Match: tc.glob}).For(tc.key)
		if got != tc.want {
			t.Errorf("%q ~ %q = %v, want %v", tc.glob, tc.key, got, tc.want)
		}
	}
}

// TestRulesGlobAsRedis: every case above is what SCAN MATCH answers on a real server.
func TestRulesGlobAsRedis(t *testing.T) {
	c := redistest.Start(t).Client(t)
	ctx := context.Background()
	for _, tc := range globCases {
		if err := c.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.Set(ctx, tc.key, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		var found bool
		iter := c.Scan(ctx, 0, tc.glob, 100).Iterator()
		for iter.Next(ctx) {
			found = found || iter.Val() == tc.key
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if found != tc.want {
			t.Errorf("SCAN MATCH %q finds %q: %v, the rules' glob says %v", tc.glob, tc.key, found, tc.want)
		}
	}
}

func TestRulesFirstMatchWins(t *testing.T) {
	table := compile(t,
		rules.Rule{Name: "vip", Match: "rate:user:vip:*", Spec: bucket.Spec{Capacity: 1000, Rate: 100}},
		rules.Rule{Name: "users", Match: "rate:user:*", Spec: bucket.Spec{Capacity: 10, Rate: 1}},
	)
	for key, want := range map[string]string{"rate:user:vip:1": "vip", "rate:user:2": "users", "rate:user:vip": "users"} {
		if r, ok := table.For(key); !ok || r.Name != want {
			t.Errorf("For(%q) = %q, %v; want %q", key, r.Name, ok, want)
		}
	}
	if r, ok := table.For("rate:org:1"); ok {
		t.Errorf("For(rate:org:1) = %q, want no rule", r.Name)
	}
	var none *rules.Table
	if _, ok := none.For("x"); ok {
		t.Error("a nil table matched a key")
	}
}

func TestNewRulesRefusesBadRules(t *testing.T) {
	for name, r := range map[string]rules.Rule{
		"no pattern":   {Name: "a", Spec: bucket.Spec{Capacity: 1, Rate: 1}},
		"no rate":      {Name: "a", Match: "a:*", Spec: bucket.Spec{Capacity: 1}},
		"negative cap": {Name: "a", Match: "a:*", Spec: bucket.Spec{Capacity: -1, Rate: 1}},
	} {
		if _, err := rules.New([]rules.Rule{r}); !errors.Is(err, bucket.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
}

// TestRulesResolver: what the caller gives wins; a matching rule fills in the layout, the
// spec (naming itself as the source) and the cost the caller left open.
func TestRulesResolver(t *testing.T) {
	express, err := bucket.LookupLayout("express")
	if err != nil {
		t.Fatal(err)
	}
	spring, err := bucket.LookupLayout("spring")
	if err != nil {
		t.Fatal(err)
	}
	ruleLayout := express
	table := compile(t, rules.Rule{Name: "users", Match: "rate:user:*", Layout: &ruleLayout,
		Spec: bucket.Spec{Capacity: 100, Rate: 10}, Cost: 5})

	open := table.Resolver(bucket.Target{Cost: 1}, false)
	got := open("rate:user:1")
	if got.Layout == nil || got.Layout.Name != express.Name || got.Spec != (bucket.Spec{Capacity: 100, Rate: 10}) ||
		got.Source != "rule users" || got.Cost != 5 {
		t.Fatalf("open flags: %+v, want the rule's layout, spec and cost", got)
	}
	got.Layout.Name = "changed"
	if again := open("rate:user:2"); again.Layout.Name != express.Name || ruleLayout.Name != express.Name {
		t.Fatal("changing a resolved Target's layout changed the rule")
	}
	if got := open("rate:org:1"); got.Layout != nil || !got.Spec.IsZero() || got.Source != "" || got.Cost != 1 {
		t.Fatalf("no rule: %+v, want the base target", got)
	}

	flags := bucket.Target{Layout: &spring, Spec: bucket.Spec{Capacity: 3, Rate: 1}, Cost: 2, Source: "flags"}
	got = table.Resolver(flags, true)("rate:user:1")
	if got.Layout.Name != spring.Name || got.Spec != flags.Spec || got.Source != "flags" || got.Cost != 2 {
		t.Fatalf("flags given: %+v, want the flags' layout, spec and cost", got)
	}
	if got := table.Resolver(flags, false)("rate:user:1"); got.Cost != 5 {
		t.Fatalf("cost not fixed: cost %v, want the rule's 5", got.Cost)
	}
}

// TestQuoteGlob: a quoted prefix matches itself literally, metacharacters and all.
func TestQuoteGlob(t *testing.T) {
	prefix := `a*b?[c]\d`
	if got, want := rules.QuoteGlob(prefix), `a\*b\?\[c\]\\d`; got != want {
		t.Fatalf("QuoteGlob(%q) = %q, want %q", prefix, got, want)
	}
	table := compile(t, rules.Rule{Match: rules.QuoteGlob(prefix) + "*"})
	for key, want := range map[string]bool{prefix: true, prefix + ":1": true, `aXbYcZd`: false, `a*b?c\d`: false} {
		if _, got := table.For(key); got != want {
			t.Errorf("For(%q) = %v, want %v", key, got, want)
		}
	}
}

// TestGlobPrefix: the literal start of a glob, up to its first metacharacter.
func TestGlobPrefix(t *testing.T) {
	for pattern, want := range map[string]string{
		"rate:user:*": "rate:user:", "*": "", "exact": "exact", "a?b": "a", "k[0-9]": "k", `x\*y`: "x", "": "",
	} {
		if got := rules.GlobPrefix(pattern); got != want {
			t.Errorf("GlobPrefix(%q) = %q, want %q", pattern, got, want)
		}
	}
}
