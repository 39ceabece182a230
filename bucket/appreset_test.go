package bucket_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
)

func TestResetWriteFormatsAndTTL(t *testing.T) {
	const now = int64(1795428012_266140) // µs
	sp := bucket.Spec{Capacity: 10, Rate: 2}
	behind := bucket.Level{Tokens: 1, TS: now - 3e6}
	ahead := bucket.Level{Tokens: 1, TS: now + 4_200_000}
	for _, c := range []struct {
		layout       string
		stored       bucket.Level
		tokens, time string
		ttl          time.Duration
	}{
		// ceil((10-2.5)/2 s) = 3.75 s to full + 60 s grace.
		{"native", behind, "2.5", "1795428012266140", 63750 * time.Millisecond},
		{"native", ahead, "2.5", "1795428016466140", 67950 * time.Millisecond},
		{"webman", behind, "2.5", "1795428012.26614", 64 * time.Second},
		{"go-bench", behind, "2.5", "1795428012266", 64 * time.Second},
		// go-bench refills from max(now, ts): 4.2 s ahead + 3.75 s.
		{"go-bench", ahead, "2.5", "1795428016466", 68 * time.Second},
		// ceil(cap/rate)+60 s; the time in whole seconds, as Spring writes it.
		{"spring", behind, "2.5", "1795428012", 65 * time.Second},
		// ceil(2·burst/rate) s, and ceil(2·cap/rate) s.
		{"multi-tier", behind, "2.5", "1795428012.26614", 10 * time.Second},
		{"express", behind, "2.5", "1795428012.26614", 10 * time.Second},
		// Ahead by 4.2 s: full only in 7.95 s, still within the own TTL of 10 s.
		{"express", ahead, "2.5", "1795428016.46614", 10 * time.Second},
	} {
		tok, ts, ttl := bucket.Presets[c.layout].ResetWrite(sp, c.stored, true, now, 2.5)
		if tok != c.tokens || ts != c.time || ttl != c.ttl {
			t.Errorf("%s from %+v: wrote %s at %s with TTL %v, want %s at %s with TTL %v", c.layout, c.stored, tok, ts, ttl, c.tokens, c.time, c.ttl)
		}
	}
	// A stored time far ahead postpones the refill beyond the application's own TTL.
	far := bucket.Level{Tokens: 0, TS: now + 30e6}
	if _, _, ttl := bucket.Presets["express"].ResetWrite(sp, far, true, now, 0); ttl != 36*time.Second {
		t.Errorf("express 30 s ahead: TTL %v, want 36s (30 s ahead + 5 s to full, at its next ms, in whole seconds)", ttl)
	}
	// No bucket: the server's time. No spec: keep the TTL.
	if _, ts, _ := bucket.Presets["go-bench"].ResetWrite(sp, ahead, false, now, 1); ts != "1795428012266" {
		t.Errorf("no bucket: time %s", ts)
	}
	if _, _, ttl := bucket.Presets["spring"].ResetWrite(bucket.Spec{}, behind, true, now, 1); ttl != 0 {
		t.Errorf("unknown spec: TTL %v, want 0 (keep)", ttl)
	}
}

// writeReset writes what ResetWrite returns with plain commands, as a reset does.
func writeReset(t testing.TB, c *redis.Client, l bucket.Layout, key, tok, ts string, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	pipe := c.TxPipeline()
	if l.Native {
		// The stored spec and counters kept, the level and time written.
		n, _ := bucket.DecodeNative(c.Get(ctx, key).Val())
		n.Tokens, _ = strconv.ParseFloat(tok, 64)
		n.TS, _ = strconv.ParseFloat(ts, 64)
		pipe.Set(ctx, key, bucket.EncodeNative(n), ttl)
	} else if l.Type == bucket.Strings {
		pipe.Set(ctx, key, tok, ttl)
		pipe.Set(ctx, l.Keys(key)[1], ts, ttl)
	} else {
		pipe.HSet(ctx, key, l.TokensField, tok, l.TimeField, ts)
		pipe.PExpire(ctx, key, ttl)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestResetFidelity: after a reset to N written as ResetWrite says, the application with its
// own clock, 5 s fast or right, sees exactly N plus the refill since (go-bench's fast client
// no longer gets the 5 s it is ahead), and the TTL outlives the refill to full: the old TTL
// (go-bench's caller set 1 s) no longer expires the bucket into a full one.
func TestResetFidelity(t *testing.T) {
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	sp := bucket.Spec{Capacity: 4, Rate: 0.5}
	const n = 2.5
	for name, o := range oracles(t) {
		for _, skew := range []time.Duration{0, 5 * time.Second} {
			if o.serverClock && skew != 0 {
				continue
			}
			t.Run(name+"/skew="+skew.String(), func(t *testing.T) {
				key := o.bucket("reset:" + name)
				c.Del(ctx, o.layout.Keys(key)...)
				// The application takes 3 of 4 tokens with its clock skew ahead; go-bench's
				// caller passes a 1 s PEXPIRE.
				clock := serverMicros(t, c) + skew.Microseconds()
				clock -= clock % 1000 // a ms clock (go-bench, Express) reads it exactly
				if name == "go-bench" {
					args := o.args
					o.args = func(k string, sp bucket.Spec, now int64, cost float64) ([]string, []any) {
						keys, argv := args(k, sp, now, cost)
						argv[4] = 1000
						return keys, argv
					}
				}
				for i := 0; i < 3; i++ {
					o.run(t, c, key, sp, clock, 1)
				}
				if o.layout.Native { // the peek above wrote nothing: write what a take leaves
					o.write(t, c, key, sp, bucket.Level{Tokens: 1, TS: clock}, true)
					c.PExpire(ctx, key, time.Second)
				}
				oldTTL := c.PTTL(ctx, o.layout.Keys(key)[0]).Val()
				s := inspectAt(t, c, key, o, sp, 0)
				tok, ts, ttl := o.layout.ResetWrite(sp, s.Stored, s.Exists, s.Now, n)
				written, err := o.layout.ParseTime(ts)
				if err != nil || written < s.Now-o.layout.Step().Microseconds() {
					t.Fatalf("reset time %s (%v) is before the server's %v", ts, err, s.Now)
				}
				// Webman refills negatively from a time ahead of its clock: its reset writes the
				// server's now, which a caller on the server's clock reads as N, and says what
				// the fast writer reads (ResetReads). The others keep the later stored time.
				keep := o.layout.KeepsLaterTime()
				if keep && written < s.Stored.TS-o.layout.Step().Microseconds() {
					t.Fatalf("reset time %s is before the stored %v", ts, s.Stored.TS)
				}
				if !keep && written > s.Now+o.layout.Step().Microseconds() {
					t.Fatalf("reset time %s is not the server's %v (stored %v)", ts, s.Now, s.Stored.TS)
				}
				writeReset(t, c, o.layout, key, tok, ts, ttl)

				// The refill until full after the reset, in server time, is covered by the TTL;
				// the TTL outlives the old one, and the application's own one.
				toFull := time.Duration(written-s.Now)*time.Microsecond + time.Duration((sp.Capacity-n)/sp.Rate*float64(time.Second))
				// (An owner whose TTL is its own rule whatever the refill, Traefik's, gets that
				// TTL: its expiry is the full bucket the owner reads then;
				// Upstash's is the refill to full, which a reset to more tokens shortens.)
				owners := o.layout.Model().ResetTTL(sp, toFull)
				ownRule := owners <= toFull+time.Millisecond
				if ownRule { // counting down since the write
					toFull = owners - 100*time.Millisecond
				}
				pttl := c.PTTL(ctx, o.layout.Keys(key)[0]).Val()
				if pttl < toFull || (pttl < oldTTL-100*time.Millisecond && !ownRule) {
					t.Fatalf("TTL %v after the reset: want at least the %v to full and the old %v", pttl, toFull, oldTTL)
				}

				// The application, 250 ms after its last write by its clock, sees N plus the
				// refill since the time written: exactly 2.625 for the fast client (up to the
				// rounding of float seconds near 1.8e9, 2.4e-7 s).
				if o.serverClock {
					before := serverMicros(t, c)
					app := o.run(t, c, key, sp, 0, 0)
					after := serverMicros(t, c)
					lo := n + float64(floorDiv(before, 1e6)-written/1e6)*sp.Rate
					hi := n + float64(floorDiv(after, 1e6)-written/1e6)*sp.Rate
					if app.level != lo && app.level != hi {
						t.Fatalf("after reset to %v (time %s) Spring saw %v, want %v (or %v)", n, ts, app.level, lo, hi)
					}
					return
				}
				if !keep && skew > 0 {
					// The fast writer reads what ResetReads says, and gains its lead's refill.
					_, writer, differs := o.layout.ResetReads(sp, s.Stored, s.Exists, s.Now, n)
					app := o.run(t, c, key, sp, clock, 0)
					if !differs || !app.levelKnown || math.Abs(app.level-writer) > 1e-3 || writer <= n {
						t.Fatalf("after reset to %v the writer (%v ahead) saw %v, ResetReads said %v (differs %v)", n, skew, app.level, writer, differs)
					}
					writeReset(t, c, o.layout, key, tok, ts, ttl)
					clock = s.Now // a caller on the server's clock
				}
				// After the write also on a slow machine, on a step of the application's clock
				// (Express's is whole ms).
				from, step := max(clock, written), o.layout.Step().Microseconds()
				at := from + (step-from%step)%step + 250_000
				// (Upstash refills in whole intervals: nothing yet.)
				app := o.run(t, c, key, sp, at, 0)
				want := o.layout.Level(sp, bucket.Level{Tokens: n, TS: written}, at).Tokens
				if cont := math.Min(sp.Capacity, n+float64(at-written)/1e6*sp.Rate); want > cont+1e-6 {
					t.Fatalf("after reset to %v the model reads %v at %v, more than the continuous refill's %v", n, want, at, cont)
				}
				if !app.levelKnown || math.Abs(app.level-want) > 1e-6 || (skew > 0 && want > 2.625) {
					t.Fatalf("after reset to %v (time %s) the application saw %v, want %v", n, ts, app.level, want)
				}
				if v, _ := strconv.ParseFloat(tok, 64); v != n {
					t.Fatalf("tokens written %q", tok)
				}
			})
		}
	}
}
