package cmd

import (
	"context"
	"errors"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	env, _, _ := directEnv(t, srv.URL())
	f := env.src
	ctx := context.Background()
	st := bucket.NewStore(c)
	tg := bucket.Target{Spec: bucket.Spec{Capacity: 10, Rate: 0.001}, Cost: 4}

	o, err := decide(ctx, f, st, "c:a", tg, false)
	if err != nil || !o.Allowed || !o.Exists || o.Layout != "native" || o.Remaining != 6 {
		t.Fatalf("consume 4 of 10: %v %+v", err, o)
	}
	// A cost above capacity is denied, and nothing is written.
	never := tg
	never.Cost = 11
	before := c.HGetAll(ctx, "c:a").Val()
	if o, err := decide(ctx, f, st, "c:a", never, false); err != nil || o.Allowed || o.RetryAfter >= 0 {
		t.Fatalf("consume 11 of 10: %v %+v", err, o)
	}
	if after := c.HGetAll(ctx, "c:a").Val(); after["ts"] != before["ts"] || after["denied"] != before["denied"] {
		t.Fatalf("a cost above capacity wrote the bucket: %v -> %v", before, after)
	}
	// check writes nothing and says a missing key does not exist.
	if o, err := decide(ctx, f, st, "c:none", tg, true); err != nil || !o.Allowed || o.Exists {
		t.Fatalf("check of a missing key: %v %+v", err, o)
	}
	if n := c.Exists(ctx, "c:none").Val(); n != 0 {
		t.Fatal("check created the key")
	}
	// A key that is not a bucket: the read says what it is, and it is no write failure.
	c.Set(ctx, "c:user", "a user record", 0)
	_, err = decide(ctx, f, st, "c:user", tg, false)
	var wf *bucket.KeyError // what a failed write is wrapped in
	if err == nil || errors.As(err, &wf) || c.Get(ctx, "c:user").Val() != "a user record" {
		t.Fatalf("consume of a string: %v (write failure: %v)", err, wf)
	}
}
