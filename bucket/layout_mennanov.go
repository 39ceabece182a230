package bucket

import (
	"fmt"
	"math"
	"time"
)

// mennanov: mennanov/limiters' TokenBucket over TokenBucketRedis: the decision is Go on the
// client, the state one JSON string (mennanov_state.go).
func init() {
	register(Layout{Name: "mennanov", Type: JSON, TimeUnit: unitNS, model: mennanovModel{},
		About: `mennanov/limiters TokenBucketRedis: string {PREFIX}state = {"state":{"Last":ns,"Available":n},"version":v} ` +
			"(client clock, ns; whole tokens, one per 1/rate s), TTL as its caller sets it (or none); " +
			"reset writes its own zero state (full) or N, version+1"})
	register(Layout{Name: "mennanov-legacy", Type: Strings, TokensKey: "{*}available", TimeKey: "{*}last", TimeUnit: unitNS,
		model: mennanovModel{},
		About: "mennanov/limiters TokenBucketRedis up to v1.13.0 (later ones read it where {PREFIX}state is missing): " +
			"strings {PREFIX}available and {PREFIX}last (ns), arithmetic as mennanov; a reset increments {PREFIX}version"})
}

type mennanovModel struct{ ownModel }

// Level is takeMinMax's refill (tokenbucket.go:110-123): whole tokens per interval since
// Last; short of capacity Last moves on by whole intervals, else it is now, full.
func (mennanovModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	interval, capacity := nsInterval(spec.Rate), int64(spec.Capacity)
	avail, last, n := int64(stored.Tokens), stored.TS*1000, now*1000
	if add := (n - last) / interval; add > 0 {
		if add+avail < capacity {
			avail, last = avail+add, n-(n-last)%interval
		} else {
			avail, last = capacity, n
		}
	}
	return Level{Tokens: float64(avail), TS: ceilDiv(last, 1000)}
}

// Allows: takeMinMax refuses when minTokens > Available (tokenbucket.go:125).
func (mennanovModel) Allows(_ Spec, level, cost float64) bool { return level >= math.Ceil(cost) }

// AppRetryAfter: refillRate × (minTokens − Available) (tokenbucket.go:126), which counts
// whole intervals from now, not from Last: up to one interval longer than the true wait.
func (mennanovModel) AppRetryAfter(spec Spec, level, cost float64) (time.Duration, bool) {
	if level >= math.Ceil(cost) {
		return 0, true
	}
	return time.Duration(nsInterval(spec.Rate)) * time.Duration(math.Ceil(cost)-level), true
}

func (mennanovModel) ClientClock() bool { return true }

// NoTTLByDesign: the TTL is the caller's NewTokenBucketRedis argument, 0 for none.
func (mennanovModel) NoTTLByDesign() bool { return true }

// MissingTime: a missing Last is the zero state, full (tokenbucket.go:517-530): Last 0.
func (mennanovModel) MissingTime(int64) int64 { return 0 }

// wholeTokens refuses a reset to a fraction of a token: the owner parses an int64.
func wholeTokens(op ResetOp) error {
	if _, ok := op.Layout.Model().(mennanovModel); ok && !op.To.Delete && op.To.Tokens != math.Trunc(op.To.Tokens) {
		return fmt.Errorf("%w: tokens %v: %s keeps whole tokens: give a whole number", ErrInvalid, op.To.Tokens, op.Layout.Name)
	}
	return nil
}

// ResetWritesFull says a reset to full writes the owner's zero state (read as full) rather
// than delete the bucket, whose version must go on counting.
func (l Layout) ResetWritesFull() bool {
	_, ok := l.Model().(mennanovModel)
	return ok
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
