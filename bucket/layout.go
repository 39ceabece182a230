package bucket

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// KeyType is how a layout stores one bucket in Redis.
type KeyType string

const (
	Hash    KeyType = "hash"    // one hash: a tokens field and a time field
	Strings KeyType = "strings" // two strings, named by the patterns TokensKey and TimeKey
	GCRA    KeyType = "gcra"    // one string: a theoretical arrival time (TAT)
	JSON    KeyType = "json"    // one string: its owner's JSON document (layout_mennanov.go)
	Tagged  KeyType = "tagged"  // bucketctl's own tagged string (native.go)
)

// TimeUnit is the unit of a layout's stored time.
type TimeUnit string

const (
	unitS  TimeUnit = "s"
	unitMS TimeUnit = "ms"
	unitUS TimeUnit = "us"
	unitNS TimeUnit = "ns"
)

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

// Layout describes how an application stores its buckets.
type Layout struct {
	Name        string  `json:"name" yaml:"name"`
	Type        KeyType `json:"type" yaml:"type"`
	TokensField string  `json:"tokens_field,omitempty" yaml:"tokens_field,omitempty"`
	TimeField   string  `json:"time_field,omitempty" yaml:"time_field,omitempty"`
	// TokensKey and TimeKey are a two-key bucket's key patterns (one '*'); the first names it.
	TokensKey string   `json:"tokens_key,omitempty" yaml:"tokens_key,omitempty"`
	TimeKey   string   `json:"time_key,omitempty" yaml:"time_key,omitempty"`
	TimeUnit  TimeUnit `json:"time_unit" yaml:"time_unit"`
	FloatTime bool     `json:"float_time" yaml:"float_time"` // the time has a fraction
	// Native marks bucketctl's own layouts: they store capacity, rate and counters.
	Native bool `json:"native,omitempty" yaml:"native,omitempty"`
	// Library, KeyPrefix and Epoch (Unix seconds) are a gcra layout's library and its form.
	Library   string `json:"library,omitempty" yaml:"library,omitempty"`
	KeyPrefix string `json:"key_prefix,omitempty" yaml:"key_prefix,omitempty"`
	Epoch     int64  `json:"epoch,omitempty" yaml:"epoch,omitempty"`
	Clock     string `json:"clock,omitempty" yaml:"clock,omitempty"` // "server", "client" or the model's
	// TimeFirst says the owner reads the hash by position, time first (a reset keeps it so).
	TimeFirst bool          `json:"time_first,omitempty" yaml:"time_first,omitempty"`
	Interval  time.Duration `json:"interval,omitempty" yaml:"interval,omitempty"` // the owner's refill step
	Like      string        `json:"like,omitempty" yaml:"like,omitempty"`         // the preset whose arithmetic it follows
	About     string        `json:"about,omitempty" yaml:"about,omitempty"`

	model Model
	gcra  gcraLib
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
		if err := cmp.Or(checkPattern(l.Name, "tokens_key", l.TokensKey), checkPattern(l.Name, "time_key", l.TimeKey)); err != nil {
			return err
		}
		if l.TokensKey == l.TimeKey {
			return fmt.Errorf("%w: layout %q: tokens_key and time_key are both %q: name the two keys apart", ErrInvalid, l.Name, l.TimeKey)
		}
	case GCRA:
		lib, err := l.lib()
		if err != nil {
			return err
		}
		return lib.validate(l)
	case JSON:
		if l.TimeUnit != unitNS || l.FloatTime {
			return fmt.Errorf("%w: layout %q: a json layout stores integer nanoseconds: set time_unit ns", ErrInvalid, l.Name)
		}
	case Tagged:
		if !l.Native {
			return fmt.Errorf("%w: layout %q: type tagged is bucketctl's native layout only", ErrInvalid, l.Name)
		}
	default:
		return fmt.Errorf("%w: layout %q: type %q must be hash, strings, gcra or json", ErrInvalid, l.Name, l.Type)
	}
	if !slices.Contains([]TimeUnit{unitS, unitMS, unitUS, unitNS}, l.TimeUnit) {
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

// Keys are the Redis keys one bucket of this layout occupies.
func (l Layout) Keys(key string) []string {
	if tk, ok := l.TimeKeyOf(key); ok && l.Type == Strings {
		return []string{key, tk}
	}
	return []string{key}
}

// WithLike fills what a custom layout leaves out from the preset it names with Like.
func (l Layout) WithLike() Layout {
	p, ok := Presets[l.Like]
	if !ok || p.Native {
		return l
	}
	l.Type = cmp.Or(l.Type, p.Type)
	l.TokensField = cmp.Or(l.TokensField, p.TokensField)
	l.TimeField = cmp.Or(l.TimeField, p.TimeField)
	l.TokensKey = cmp.Or(l.TokensKey, p.TokensKey)
	l.TimeKey = cmp.Or(l.TimeKey, p.TimeKey)
	l.Library = cmp.Or(l.Library, p.Library)
	l.KeyPrefix = cmp.Or(l.KeyPrefix, p.KeyPrefix)
	l.Epoch = cmp.Or(l.Epoch, p.Epoch)
	if l.TimeUnit == "" {
		l.TimeUnit, l.FloatTime = p.TimeUnit, p.FloatTime
	}
	return l
}

// ParseTime turns a stored time into microseconds since the epoch, as the scripts check it.
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

func (l Layout) timeOf(f float64) (int64, bool) {
	us := f * 1e6 / l.TimeUnit.perSecond()
	if us < 0 || us > maxTime {
		return 0, false
	}
	return int64(math.Round(us)), true
}

// Quantize truncates now (µs) to the layout's time resolution.
func (l Layout) Quantize(now int64) int64 {
	if step := int64(1e6 / l.TimeUnit.perSecond()); !l.FloatTime && l.TimeUnit != "" && step > 1 {
		return now - now%step
	}
	return now
}

// FormatTime writes microseconds since the epoch in the layout's own unit.
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

// FormatTokens writes a token count as a bucket stores it.
func (Layout) FormatTokens(t float64) string { return formatNumber(t) }

// swapPattern renames key, matched by pattern from, by pattern to (the '*' part never empty).
func swapPattern(from, to, key string) (string, bool) {
	pre, suf, ok := strings.Cut(from, "*")
	if !ok || strings.Contains(suf, "*") || len(key) <= len(pre)+len(suf) ||
		!strings.HasPrefix(key, pre) || !strings.HasSuffix(key, suf) {
		return "", false
	}
	return fillPattern(to, key[len(pre):len(key)-len(suf)]), true
}

func fillPattern(p, part string) string {
	pre, suf, _ := strings.Cut(p, "*")
	return pre + part + suf
}

func checkPattern(layout, field, p string) error {
	switch n := strings.Count(p, "*"); {
	case p == "":
		return fmt.Errorf("%w: layout %q: a strings layout needs %s, a key pattern with one '*' (e.g. \"*\" and \"*:last_time\")", ErrInvalid, layout, field)
	case n == 0:
		return fmt.Errorf("%w: layout %q: %s %q has no '*': put one '*' where the bucket's name goes (e.g. \"*.tokens\")", ErrInvalid, layout, field, p)
	case n > 1:
		return fmt.Errorf("%w: layout %q: %s %q has %d '*': use exactly one, where the bucket's name goes (braces are literal)", ErrInvalid, layout, field, p, n)
	}
	return nil
}

// TimeKeyOf is the time key of the two-key bucket whose tokens key is key.
func (l Layout) TimeKeyOf(key string) (string, bool) { return swapPattern(l.TokensKey, l.TimeKey, key) }

// TokensKeyOf is the tokens key (the bucket's name) of the two-key bucket with time key key.
func (l Layout) TokensKeyOf(key string) (string, bool) {
	return swapPattern(l.TimeKey, l.TokensKey, key)
}

func (l Layout) IsTimeKey(key string) bool {
	_, ok := l.TokensKeyOf(key)
	return l.Type == Strings && ok
}

// BucketKey is the tokens key for name in a two-key layout; name itself for others.
func (l Layout) BucketKey(name string) string {
	if l.Type != Strings || l.TokensKey == "" {
		return name
	}
	return fillPattern(l.TokensKey, name)
}
