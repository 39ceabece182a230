package bucket

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Model is a layout owner's arithmetic (layout_NAME.go); each embeds ownModel's defaults.
type Model interface {
	// Level is the bucket as the owner's next decision at now (µs) sees it, before taking.
	Level(l Layout, spec Spec, stored Level, now int64) Level
	// Step is the smallest change of the owner's clock it can see.
	Step(l Layout) time.Duration
	// Allows is the owner's decision on a request of cost at level.
	Allows(spec Spec, level, cost float64) bool
	// AppRetryAfter is the retry-after the owner replies; ok is false when it replies none.
	AppRetryAfter(spec Spec, level, cost float64) (retry time.Duration, ok bool)
	// ResetTTL is the TTL the owner leaves on a bucket that refills to full in full.
	ResetTTL(spec Spec, full time.Duration) time.Duration
	// ClientClock says the owner passes its callers' clock, not the server's TIME.
	ClientClock() bool
	// RefillsBackwards says the owner refills negatively from a time ahead of its clock.
	RefillsBackwards() bool
	// NoTTLByDesign says the owner never sets a TTL: a bucket without one is not a leak.
	NoTTLByDesign() bool
	// MissingTime is the time (µs) the owner reads for a level whose time key is missing.
	MissingTime(now int64) int64
}

type ownModel struct{}

func (ownModel) Level(l Layout, spec Spec, stored Level, now int64) Level {
	return spec.At(stored, l.Quantize(now))
}

func (ownModel) Step(l Layout) time.Duration {
	if l.FloatTime || l.TimeUnit == "" {
		return time.Microsecond
	}
	return max(time.Microsecond, time.Duration(1e6/l.TimeUnit.perSecond())*time.Microsecond)
}

func (ownModel) Allows(_ Spec, level, cost float64) bool { return level >= cost }

func (ownModel) AppRetryAfter(Spec, float64, float64) (time.Duration, bool) { return 0, false }

func (ownModel) ResetTTL(_ Spec, full time.Duration) time.Duration {
	return ceilTo(full, time.Second) + resetGrace
}

func (ownModel) ClientClock() bool           { return false }
func (ownModel) RefillsBackwards() bool      { return false }
func (ownModel) NoTTLByDesign() bool         { return false }
func (ownModel) MissingTime(now int64) int64 { return now }

// resetGrace is how long a reset bucket outlives its refill where its owner sets no TTL.
const resetGrace = 60 * time.Second

func ceilTo(d, unit time.Duration) time.Duration { return (d + unit - 1) / unit * unit }

const maxPresets = 24 // a fixed array: registering allocates nothing at startup

var registry struct { // the presets in the order detection tries them
	all [maxPresets]Layout
	n   int
}

// Presets are the named layouts bucketctl knows, by name.
var Presets = make(map[string]Layout, maxPresets)

// register adds a preset, in order; each layout file calls it from its init.
func register(l Layout) {
	if l.model == nil && l.gcra == nil || Presets[l.Name].Name != "" || registry.n == maxPresets {
		panic("bucket: preset " + l.Name + " registered twice, without a model, or past maxPresets")
	}
	Presets[l.Name] = l
	i := registry.n
	for ; i > 0 && !registry.all[i-1].Native && (l.Native || l.Name < registry.all[i-1].Name); i-- {
		registry.all[i] = registry.all[i-1]
	}
	registry.all[i] = l
	registry.n++
}

func presets() []Layout { return registry.all[:registry.n] }

// Registry lists the presets in the order detection tries them.
func Registry() []Layout { return slices.Clone(presets()) }

// PresetNames lists the preset names, sorted.
func PresetNames() []string { return slices.Sorted(maps.Keys(Presets)) }

// LookupLayout finds a preset by name.
func LookupLayout(name string) (Layout, error) {
	if l, ok := Presets[name]; ok {
		return l, nil
	}
	return Layout{}, fmt.Errorf("%w: unknown layout %q (known: %s)", ErrInvalid, name, strings.Join(PresetNames(), ", "))
}

func presetsOf(t KeyType) []Layout { return slices.Clip(byType()[t]) }

var byType = sync.OnceValue(func() map[KeyType][]Layout {
	m := map[KeyType][]Layout{}
	for _, l := range presets() {
		m[l.Type] = append(m[l.Type], l)
	}
	return m
})

// TwoKeyLayouts lists the two-key layouts among presets and custom, one per key pattern pair.
func TwoKeyLayouts(custom []Layout) []Layout {
	var out []Layout
	seen := map[[2]string]bool{}
	for _, l := range append(slices.Clip(presetsOf(Strings)), custom...) {
		pats := [2]string{l.TokensKey, l.TimeKey}
		if l.Type == Strings && l.TimeKey != "" && !seen[pats] {
			seen[pats] = true
			out = append(out, l)
		}
	}
	return out
}

// Model is the layout's arithmetic: its own, its Like preset's, or the native rules.
func (l Layout) Model() Model {
	if l.model != nil {
		return l.model
	}
	if p, ok := Presets[l.Like]; ok && p.model != nil {
		return p.model
	}
	return ownModel{}
}

func presetNamesOf(t KeyType) []string {
	var names []string
	for _, l := range presetsOf(t) {
		if !l.Native {
			names = append(names, l.Name)
		}
	}
	return names
}
