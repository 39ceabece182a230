package bucket

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// KeyType is how a layout stores one bucket in Redis.
type KeyType string

const (
	// Hash is one hash per bucket with a tokens field and a time field.
	Hash KeyType = "hash"
	// Strings is two string keys per bucket, named by the patterns TokensKey and TimeKey.
	Strings KeyType = "strings"
	// GCRA is one string per bucket holding a theoretical arrival time (TAT): the time at
	// which the bucket will be full again (see gcra.go).
	GCRA KeyType = "gcra"
	// JSON is one string per bucket holding its owner's JSON document of level and time
	// (mennanov/limiters' state); its form is the preset's (layout_mennanov.go).
	JSON KeyType = "json"
	// Tagged is bucketctl's own: one string per bucket, a version tag then the packed
	// level, time, spec and counters (native.go).
	Tagged KeyType = "tagged"
)

// TimeUnit is the unit of a layout's stored time: "s", "ms", "us" or "ns".
type TimeUnit string

// The time units.
const (
	unitS  TimeUnit = "s"
	unitMS TimeUnit = "ms"
	unitUS TimeUnit = "us"
	unitNS TimeUnit = "ns"
)

// perSecond is how many of the unit make a second.
func (u TimeUnit) perSecond() float64 {
	switch u {
	case unitMS:
		return 1e3
	case unitUS:
		return 1e6
	case unitNS:
		return 1e9
	}
	return 1
}

// Layout describes how an application stores its buckets. No layout but the native one
// stores capacity or rate, so those come from rules or flags.
type Layout struct {
	Name string `json:"name" yaml:"name" mapstructure:"name"`
	// Type is hash, strings, gcra, json or tagged (the native layout's).
	Type KeyType `json:"type" yaml:"type" mapstructure:"type"`
	// TokensField is the hash field holding the tokens (hash layouts).
	TokensField string `json:"tokens_field,omitempty" yaml:"tokens_field,omitempty" mapstructure:"tokens_field"`
	// TimeField is the hash field holding the last update time (hash layouts).
	TimeField string `json:"time_field,omitempty" yaml:"time_field,omitempty" mapstructure:"time_field"`
	// TokensKey and TimeKey name a bucket's two keys by patterns with one '*' (strings
	// layouts; webman "*" and "*:last_time"): the bucket is named by its tokens key.
	TokensKey string `json:"tokens_key,omitempty" yaml:"tokens_key,omitempty" mapstructure:"tokens_key"`
	TimeKey   string `json:"time_key,omitempty" yaml:"time_key,omitempty" mapstructure:"time_key"`
	// TimeUnit is s, ms, us or ns; FloatTime says the time is written with a fraction.
	TimeUnit  TimeUnit `json:"time_unit" yaml:"time_unit" mapstructure:"time_unit"`
	FloatTime bool     `json:"float_time" yaml:"float_time" mapstructure:"float_time"`
	// Native marks bucketctl's own layout: it stores capacity, rate and decision counters.
	Native bool `json:"native,omitempty" yaml:"native,omitempty" mapstructure:"native"`
	// Library names the GCRA limiter whose arithmetic a gcra layout follows: redis_rate,
	// throttled, redis-cell or redis-gcra (gcra layouts only).
	Library string `json:"library,omitempty" yaml:"library,omitempty" mapstructure:"library"`
	// KeyPrefix is the prefix the library puts before its own key names (gcra layouts).
	KeyPrefix string `json:"key_prefix,omitempty" yaml:"key_prefix,omitempty" mapstructure:"key_prefix"`
	// Epoch is the Unix time in seconds from which the stored time counts (gcra layouts).
	Epoch int64 `json:"epoch,omitempty" yaml:"epoch,omitempty" mapstructure:"epoch"`
	// Clock is "server" (Redis TIME) or "client" (the callers' clock); empty: the model's.
	Clock string `json:"clock,omitempty" yaml:"clock,omitempty" mapstructure:"clock"`
	// TimeFirst says the owner reads the hash by position, the time field first (Traefik):
	// a reset writes the two fields in that order.
	TimeFirst bool `json:"time_first,omitempty" yaml:"time_first,omitempty" mapstructure:"time_first"`
	// Interval is the owner's refill step (upstash adds Rate × Interval tokens per whole
	// interval); 0: the preset's own.
	Interval time.Duration `json:"interval,omitempty" yaml:"interval,omitempty" mapstructure:"interval"`
	// Like names the preset whose arithmetic (refill, clock, step, replies, TTL) a custom
	// layout follows; empty: the native rules at the layout's own unit.
	Like string `json:"like,omitempty" yaml:"like,omitempty" mapstructure:"like"`
	// About says where the layout comes from.
	About string `json:"about,omitempty" yaml:"about,omitempty" mapstructure:"about"`

	model Model   // a preset's own (see Model)
	gcra  gcraLib // a gcra preset's library (see gcraLib)
}

// Validate checks a (custom) layout is complete.
func (l Layout) Validate() error {
	if l.Name == "" {
		return fmt.Errorf("%w: layout has no name", ErrInvalid)
	}
	if err := l.validateLike(); err != nil {
		return err
	}
	switch l.Type {
	case Hash:
		if l.TokensField == "" || l.TimeField == "" {
			return fmt.Errorf("%w: layout %q: a hash layout needs tokens_field and time_field", ErrInvalid, l.Name)
		}
	case Strings:
		if err := checkPattern(l.Name, "tokens_key", l.TokensKey); err != nil {
			return err
		}
		if err := checkPattern(l.Name, "time_key", l.TimeKey); err != nil {
			return err
		}
		if l.TokensKey == l.TimeKey {
			return fmt.Errorf("%w: layout %q: tokens_key and time_key are both %q: name the two keys apart", ErrInvalid, l.Name, l.TimeKey)
		}
	case GCRA:
		return l.validateGCRA()
	case JSON:
		if err := l.validateJSON(); err != nil {
			return err
		}
	case Tagged:
		if !l.Native {
			return fmt.Errorf("%w: layout %q: type tagged is bucketctl's native layout only", ErrInvalid, l.Name)
		}
	default:
		return fmt.Errorf("%w: layout %q: type %q must be hash, strings, gcra or json", ErrInvalid, l.Name, l.Type)
	}
	switch l.TimeUnit {
	case unitS, unitMS, unitUS, unitNS:
	default:
		return fmt.Errorf("%w: layout %q: time_unit %q must be s, ms, us or ns (the unit of the stored time)", ErrInvalid, l.Name, l.TimeUnit)
	}
	if l.Clock != "" && l.Clock != "server" && l.Clock != "client" {
		return fmt.Errorf("%w: layout %q: clock %q must be server (Redis TIME) or client (the callers' clock)", ErrInvalid, l.Name, l.Clock)
	}
	if l.Interval < 0 {
		return fmt.Errorf("%w: layout %q: interval %v must be positive (or left out)", ErrInvalid, l.Name, l.Interval)
	}
	return nil
}

// validateLike checks the preset a custom layout names with Like.
func (l Layout) validateLike() error {
	if l.Like == "" {
		return nil
	}
	switch p, ok := Presets[l.Like]; {
	case !ok || p.Native:
		var names []string
		for _, t := range []KeyType{Hash, Strings, GCRA, JSON} {
			names = append(names, presetNamesOf(t)...)
		}
		return fmt.Errorf("%w: layout %q: like %q is not a preset: name one of %s", ErrInvalid, l.Name, l.Like, strings.Join(names, ", "))
	case p.Type != l.Type:
		return fmt.Errorf("%w: layout %q: like %q is a %s preset, the layout's type is %s: drop type, or like a %s preset (%s)", ErrInvalid,
			l.Name, l.Like, p.Type, l.Type, l.Type, strings.Join(presetNamesOf(l.Type), ", "))
	}
	return nil
}

// Keys are the Redis keys one bucket of this layout occupies: a two-key bucket's tokens key
// and its time key (only the first when key is not named by the tokens_key pattern).
func (l Layout) Keys(key string) []string {
	if tk, ok := l.TimeKeyOf(key); ok && l.Type == Strings {
		return []string{key, tk}
	}
	return []string{key}
}

// WithLike fills what a custom layout leaves out from the preset it names with Like: type,
// fields, key patterns, and the time unit (with float_time) when it gives none.
func (l Layout) WithLike() Layout {
	p, ok := Presets[l.Like]
	if !ok || p.Native {
		return l
	}
	if l.Type == "" {
		l.Type = p.Type
	}
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&l.TokensField, p.TokensField)
	fill(&l.TimeField, p.TimeField)
	fill(&l.TokensKey, p.TokensKey)
	fill(&l.TimeKey, p.TimeKey)
	fill(&l.Library, p.Library)
	fill(&l.KeyPrefix, p.KeyPrefix)
	if l.TimeUnit == "" {
		l.TimeUnit, l.FloatTime = p.TimeUnit, p.FloatTime
	}
	if l.Epoch == 0 {
		l.Epoch = p.Epoch
	}
	return l
}

// ParseTime turns a stored time into microseconds since the epoch. A time out of a stored
// one's range (0 to maxTime microseconds, checked before rounding, as the scripts check
// it: -0.4 is not a time) is an error.
func (l Layout) ParseTime(s string) (int64, error) {
	f, ok := ParseNumber(s)
	if !ok {
		return 0, fmt.Errorf("time %q is not a number", s)
	}
	us, ok := l.timeOf(f)
	if !ok {
		return 0, fmt.Errorf("time %q is out of range", s)
	}
	return us, nil
}

// timeOf is ParseTime of a number already parsed: f in the layout's unit, in µs.
func (l Layout) timeOf(f float64) (int64, bool) {
	us := f * 1e6 / l.TimeUnit.perSecond()
	if us < 0 || us > maxTime {
		return 0, false
	}
	return int64(math.Round(us)), true
}

// Quantize truncates now (microseconds) to the layout's time resolution: an application
// that stores whole seconds refills in whole seconds, so its next decision sees the level
// at the start of the current second, and so should a reader.
func (l Layout) Quantize(now int64) int64 {
	if l.FloatTime || l.TimeUnit == unitUS || l.TimeUnit == "" {
		return now
	}
	step := int64(1e6 / l.TimeUnit.perSecond())
	if step <= 1 {
		return now // nanoseconds: finer than the microseconds of now
	}
	return now - now%step
}

// FormatTime writes microseconds since the epoch in the layout's own unit, so the owning
// application reads it back correctly.
func (l Layout) FormatTime(us int64) string {
	if l.TimeUnit == unitUS && !l.FloatTime {
		return strconv.FormatInt(us, 10)
	}
	v := float64(us) / 1e6 * l.TimeUnit.perSecond()
	if l.FloatTime {
		return formatNumber(v)
	}
	return formatWhole(math.Floor(v))
}

// FormatTokens writes a token count as a bucket stores it, and its reader reads it back:
// full precision, no exponent unless the plain form passes the grammar's length (1e-63).
func (Layout) FormatTokens(t float64) string { return formatNumber(t) }
