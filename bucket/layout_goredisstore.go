package bucket

import (
	"math"
	"time"
)

// go-redisstore: sethvargo/go-redisstore (scripts/third_party/go-redisstore/).
func init() {
	register(Layout{Name: "go-redisstore", Type: Hash, TokensField: "k", TimeField: "s", TimeUnit: unitNS,
		model: goRedisStoreModel{},
		About: "sethvargo/go-redisstore: hash KEY s/t/k/m/i (start ns, tick, tokens, max, interval ns; client clock), " +
			"refills at each whole interval since s (capacity = Tokens, rate = Tokens/Interval), EXPIRE 3 × whole seconds of the interval"})
}

// hashModel is a hash owner that keeps more than a level and a time.
type hashModel interface {
	extraFields() []string
	fromHash(st State, fields map[string]string) (State, float64, string)
	resetPairs(op ResetOp) []any
}

type goRedisStoreModel struct{ ownModel }

func (goRedisStoreModel) extraFields() []string { return []string{"t", "m", "i"} }

// resetPairs: t = 0 and s = now, or s = the stored tick's time where it is still ahead.
func (goRedisStoreModel) resetPairs(op ResetOp) []any {
	if r := op.Read; r != nil && r.Exists && r.Stored.TS > r.Now {
		return []any{"t", "0", "s", op.Layout.FormatTime(r.Stored.TS)}
	}
	return []any{"t", "0"}
}

// fromHash: m (max) and i (interval ns, else the rule's) are the spec.
func (goRedisStoreModel) fromHash(st State, fields map[string]string) (State, float64, string) {
	sf := fields[st.Layout.TimeField]
	tokens, _ := parseNumberForm(fields[st.Layout.TokensField])
	start, _ := parseNumberForm(sf)
	tick, hasT := ParseNumber(fields["t"])
	if hasT && (tick < 0 || tick != math.Trunc(tick)) {
		st.fail(Corrupt, "tick t %s is not a whole number of intervals", fields["t"])
		return st, tokens, sf
	}
	m, hasM := ParseNumber(fields["m"])
	iv, hasI := ParseNumber(fields["i"])
	if !hasI && st.HasSpec() {
		iv, hasI = st.Spec.Capacity/st.Spec.Rate*1e9, true
	}
	if hasM && hasI && m > 0 && iv > 0 {
		sp := Spec{Capacity: m, Rate: m / (iv / 1e9)}
		if sp.Validate() == nil && (fields["i"] != "" || sp.Capacity != st.Spec.Capacity) {
			st.Spec, st.SpecSource = sp, "bucket"
		}
	}
	if !st.HasSpec() || tick == 0 {
		return st, tokens, sf
	}
	return st, tokens, formatNumber(float64(start + tick*goRedisStoreInterval(st.Spec)))
}

func goRedisStoreInterval(spec Spec) float64 { return math.Round(spec.Capacity / spec.Rate * 1e9) }

// Level: refilled when lasttick < floor((now − s)/i) to min(m, ticks × (i / k)).
func (goRedisStoreModel) Level(_ Layout, spec Spec, stored Level, now int64) Level {
	iv := goRedisStoreInterval(spec)
	ticks := math.Floor(float64(now-stored.TS) * 1e3 / iv)
	if !(ticks > 0) {
		return stored
	}
	rate := iv / stored.Tokens
	tok := float64(ticks * rate)
	if tok > spec.Capacity {
		tok = spec.Capacity
	}
	return Level{Tokens: tok, TS: stored.TS + int64(math.Round(ticks*iv/1e3))}
}

// Allows: the script takes one token when k > 0; a request of cost takes ceil(cost).
func (goRedisStoreModel) Allows(_ Spec, level, cost float64) bool {
	return cost <= 0 || level > math.Ceil(cost)-1
}

// ResetTTL: EXPIRE 3 × floor(i / 1 s), at least the refill to full.
func (goRedisStoreModel) ResetTTL(spec Spec, full time.Duration) time.Duration {
	owner := 3 * time.Duration(math.Floor(goRedisStoreInterval(spec)/1e9)) * time.Second
	return max(owner, ceilTo(full, time.Second))
}

func (goRedisStoreModel) ClientClock() bool { return true }
