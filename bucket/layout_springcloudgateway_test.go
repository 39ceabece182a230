package bucket_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

// TestTwoKeyPatterns: a two-key bucket is named by its tokens key, its time key derived
// through the layout's patterns (braces literal); a key the tokens pattern does not name is
// refused at a reset before anything is sent.
func TestTwoKeyPatterns(t *testing.T) {
	wm, scg := bucket.Presets["webman"], bucket.Presets["spring-cloud-gateway"]
	for _, tc := range []struct {
		l    bucket.Layout
		key  string
		want []string
	}{
		{wm, "rl:{u1}", []string{"rl:{u1}", "rl:{u1}:last_time"}},
		{scg, "request_rate_limiter.{r.u1}.tokens", []string{"request_rate_limiter.{r.u1}.tokens", "request_rate_limiter.{r.u1}.timestamp"}},
		{scg, "rl:u1", []string{"rl:u1"}},
		{scg, "request_rate_limiter..tokens", []string{"request_rate_limiter..tokens"}},
	} {
		if got := tc.l.Keys(tc.key); !slices.Equal(got, tc.want) {
			t.Errorf("%s.Keys(%q) = %q, want %q", tc.l.Name, tc.key, got, tc.want)
		}
	}
	if k, ok := scg.TokensKeyOf("request_rate_limiter.{r.u1}.timestamp"); !ok || k != "request_rate_limiter.{r.u1}.tokens" || !scg.IsTimeKey("request_rate_limiter.{r.u1}.timestamp") {
		t.Errorf("TokensKeyOf: %q %v", k, ok)
	}
	if wm.IsTimeKey(":last_time") || !wm.IsTimeKey("a:last_time") || scg.IsTimeKey("request_rate_limiter.{x}.tokens") {
		t.Error("IsTimeKey")
	}
	if got := scg.BucketKey("{r.u1}"); got != "request_rate_limiter.{r.u1}.tokens" {
		t.Errorf("BucketKey: %q", got)
	}

	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	c.Set(ctx, "rl:u1", "3", 0)
	_, err := bucket.NewStore(c).Reset(ctx, "rl:u1", scg, bucket.Spec{Capacity: 10, Rate: 1}, bucket.ResetTo{Tokens: 5})
	if !errors.Is(err, bucket.ErrInvalid) || c.Get(ctx, "rl:u1").Val() != "3" || c.Exists(ctx, "rl:u1.timestamp").Val() != 0 {
		t.Fatalf("reset of a key the tokens pattern does not name: %v", err)
	}
}

// TestSpringCloudGatewayLoneLevel: Spring Cloud Gateway reads a missing timestamp as 0, so a
// declared tokens key (with the TTL its script sets) whose timestamp is gone is full to its
// script, and to bucketctl.
func TestSpringCloudGatewayLoneLevel(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	o := oracles(t)["spring-cloud-gateway"]
	sp := bucket.Spec{Capacity: 10, Rate: 1}
	key := o.bucket("lone")
	c.Set(ctx, key, "1", 20*time.Second) // SETEX floor(2·burst/rate)
	s := inspectAt(t, c, key, o, sp, 0)
	if s.Tokens != sp.Capacity || s.Stored.Tokens != 1 {
		t.Fatalf("a lone level read as %v tokens (stored %v), want full", s.Tokens, s.Stored.Tokens)
	}
	if run := o.run(t, c, key, sp, 0, sp.Capacity); !run.allowed || run.level != sp.Capacity {
		t.Fatalf("the script saw %v (allowed %v)", run.level, run.allowed)
	}
}
