package bucket_test

import (
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
)

// TestDecideCorners: the corners of the issue, figure by figure.
func TestDecideCorners(t *testing.T) {
	const s = int64(1e6)
	const now = 1_800_000_000*s + 300_000 // x.3 s
	for _, c := range []struct {
		name        string
		layout      string
		spec        bucket.Spec
		stored      bucket.Level
		cost        float64
		allowed     bool
		level       float64
		retry, full time.Duration
		app         time.Duration // what the application reports
		differs     bool
		late        int64 // µs the decision is made after now
	}{
		// Webman never clamps: a full bucket written 5 s ahead reads 10 - 50 = -40, and one
		// token is there 0.9 s before the stored time.
		{"webman ahead", "webman", bucket.Spec{Capacity: 10, Rate: 10}, bucket.Level{Tokens: 10, TS: now + 5*s}, 1,
			false, -40, 4100 * time.Millisecond, 5 * time.Second, 0, false, 0},
		// Spring refills when the second turns: 0.5 + 1 at 1800000001 s, 0.7 s from now (a
		// continuous refill would say 0.5 s: too early).
		{"spring whole second", "spring", bucket.Spec{Capacity: 10, Rate: 1}, bucket.Level{Tokens: 0.5, TS: now - 300_000}, 1,
			false, 0.5, 700 * time.Millisecond, 9700 * time.Millisecond, 0, false, 0},
		// Spring without a refill does not clamp: 12 stored above a capacity of 10 allow 11.
		{"spring above capacity", "spring", bucket.Spec{Capacity: 10, Rate: 1}, bucket.Level{Tokens: 12, TS: now - 300_000}, 11,
			true, 12, 0, 0, 0, false, 0},
		// go-bench keeps max(now, ts): nothing refills for the 4 s ahead; it reports 50 ms.
		{"go-bench ahead", "go-bench", bucket.Spec{Capacity: 10, Rate: 20}, bucket.Level{Tokens: 0, TS: now + 4*s}, 1,
			false, 0, 4050 * time.Millisecond, 4500 * time.Millisecond, 50 * time.Millisecond, true, 0},
		// Its usual report (the need in ms, from its current ms) is right to the ms.
		{"go-bench", "go-bench", bucket.Spec{Capacity: 10, Rate: 100}, bucket.Level{Tokens: 0, TS: now}, 1,
			false, 0, 9700 * time.Microsecond, 99700 * time.Microsecond, 10 * time.Millisecond, false, 300},
		// Express truncates 1.6 s to 1 (a Lua number reply).
		{"express truncates", "express", bucket.Spec{Capacity: 10, Rate: 0.5}, bucket.Level{Tokens: 0.2, TS: now}, 1,
			false, 0.2, 1600 * time.Millisecond, 19600 * time.Millisecond, time.Second, true, 0},
		{"never", "multi-tier", bucket.Spec{Capacity: 10, Rate: 1}, bucket.Level{Tokens: 10, TS: now}, 11,
			false, 10, -1, 0, time.Second, true, 0},
	} {
		l := bucket.Presets[c.layout]
		d := l.Decide(c.spec, c.stored, true, now+c.late, c.cost)
		if d.Allowed != c.allowed || d.Remaining != c.level || d.RetryAfter != c.retry || d.ResetAfter != c.full ||
			d.AppRetryAfter != c.app || d.AppDiffers(l.Step()) != c.differs {
			t.Errorf("%s: %+v (differs %v), want allowed=%v level %v retry %v full %v app %v differs %v",
				c.name, d, d.AppDiffers(l.Step()), c.allowed, c.level, c.retry, c.full, c.app, c.differs)
		}
	}
}
