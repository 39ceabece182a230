package audit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rules"
	"github.com/bucketctl/bucketctl/bucket/slot"
)

// Severity ranks a finding.
type Severity string

const (
	Info    Severity = "info"    // worth knowing, not a fault
	Warning Severity = "warning" // costs memory or hides a fault to come
	Error   Severity = "error"   // buckets hand out wrong decisions, or cannot be read or reset
)

// Rank orders severities, least severe first: info 0, warning 1, error 2 (-1 unknown).
func (s Severity) Rank() int { return slices.Index([]Severity{Info, Warning, Error}, s) }

// FindingKind names a finding.
type FindingKind string

const (
	FindingCorrupt       FindingKind = "corrupt"
	FindingOverCapacity  FindingKind = "over-capacity"
	FindingTTLShort      FindingKind = "ttl-short"
	FindingCrossSlot     FindingKind = "cross-slot"
	FindingClockAhead    FindingKind = "clock-ahead"
	FindingGCRADebt      FindingKind = "gcra-debt"
	FindingNoTTL         FindingKind = "no-ttl"
	FindingExtraFields   FindingKind = "extra-fields"
	FindingHotSlot       FindingKind = "hot-slot"
	FindingNoTTLByDesign FindingKind = "no-ttl-by-design"
	FindingUndeclared    FindingKind = "undeclared"
	FindingCounter       FindingKind = "counter"
)

// FindingInfo is what a kind of finding means and how to fix it.
type FindingInfo struct {
	Kind     FindingKind
	Severity Severity
	Meaning  string
	Fix      string
}

// Findings lists every kind of finding, in report order: the README's list.
var Findings = []FindingInfo{
	{FindingCorrupt, Error, "a stored value of a bucket does not parse, overflows or is negative: the application's next decision is undefined",
		"find the writer of these keys; reset them (bucketctl reset KEY) once it is fixed"},
	{FindingOverCapacity, Error, "more tokens stored than the capacity: the application grants more than its limit until they are spent",
		"check the capacity in the rule against the application's; reset the keys with --tokens"},
	{FindingTTLShort, Error, "the TTL ends before the bucket is full again: expiry hands out a full bucket early (an over-grant)",
		"set a TTL of at least capacity/rate in the application (bucketctl's own script does)"},
	{FindingCrossSlot, Error, "a two-key bucket whose keys hash to different Cluster slots: the application's script fails (CROSSSLOT)",
		"give both keys one {hash tag} in the part the layout's key patterns share, e.g. {user:42} and {user:42}:last_time"},
	{FindingClockAhead, Warning, "the stored time is ahead of the server's clock: a client clock runs fast, and the bucket refills late",
		"sync the clients' clocks (NTP), or let the script use Redis TIME"},
	{FindingGCRADebt, Warning, "a GCRA bucket (redis-rate, throttled, redis-cell, redis-gcra) whose TAT lies past a full window of the configured limit: clients in debt from a higher limit (a burst lowered), or a server clock that went back; the library denies until the debt is waited out",
		"nothing, if the limit was lowered on purpose; to forgive the debt, reset the keys (bucketctl reset KEY)"},
	{FindingNoTTL, Warning, "a bucket without a TTL although its application sets one: it never leaves memory",
		"find what removed the TTL (PERSIST, a plain SET); reset the keys, or give them a TTL"},
	{FindingExtraFields, Warning, "a hash with a bucket's fields and others: another application's data under a rate-limit key, or a layout bucketctl does not know",
		"rename one application's keys, or describe the layout in the config file"},
	{FindingHotSlot, Warning, "most buckets of a family in one Cluster slot (a {hash tag} covering the family): one shard takes all their traffic",
		"tag per user or tenant ({user:42}), not per family"},
	{FindingNoTTLByDesign, Info, "buckets of an application that never sets a TTL (webman): keys of churned users stay in memory",
		"expire idle buckets in the application, or remove old ones with bucketctl reset --match"},
	{FindingUndeclared, Info, "keys that look like another application's buckets (a guess: application hashes, deadlines and locks can store the same): read, never written, until a layout is declared for them",
		"if they are buckets, declare their layout with the rule shown (config file) or --layout; if not, nothing to do"},
	{FindingCounter, Info, "keys of a counter or window limiter (Kong, envoy ratelimit, ulule/limiter, rate-limiter-flexible, limits, go-zero, Laravel), named by their form: not buckets, never written, also where a rule declares a bucket layout over them",
		"nothing; a rule that matches them declares no bucket: narrow its match"},
}

// Finding is the tally of one kind.
type Finding struct {
	FindingInfo
	Count    int64
	Examples []string // the first few keys found (family prefixes for hot-slot)
	Memory   int64    // the keys' estimated bytes (0 when none was sampled)
	Sampled  int
	MaxAhead time.Duration // the largest lead of a stored time or TAT (clock-ahead, gcra-debt)
	Detail   string        // more about the examples (hot-slot: the slot and its share)

	memSum int64
}

// Family is the keys sharing a prefix, with the layouts found there.
type Family struct {
	Prefix  string
	Keys    int64
	Buckets int64
	Layouts map[string]int64 // buckets by layout name
	Memory  int64            // estimated bytes, from Sampled keys measured
	Sampled int

	memSum int64
	slots  map[int]int64
}

// Options tune an audit.
type Options struct {
	Depth       int   // ':'-separated segments that name a family (0: all but the last)
	Examples    int   // keys a finding keeps (default 5)
	Samples     int   // keys of each family and finding measured with MEMORY USAGE (default 5; < 0: none)
	MaxSamples  int   // the most keys measured in all (default 1000)
	MaxFamilies int   // families kept (default 1000); further keys count under "(other)"
	HotSlotMin  int64 // the fewest buckets of a family, half in one slot, for hot-slot (default 16)
	Cluster     bool  // slots matter (cross-slot and hot-slot findings)
}

func (o *Options) defaults() {
	o.Examples, o.Samples = positive(o.Examples, 5), cmp.Or(o.Samples, 5)
	o.MaxSamples, o.MaxFamilies, o.HotSlotMin = positive(o.MaxSamples, 1000), positive(o.MaxFamilies, 1000), positive(o.HotSlotMin, 16)
}

func positive[T int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// FamilyOf is key up to its last ':' (depth 0) or its first depth segments; "" without ':'.
func FamilyOf(key string, depth int) string {
	if depth <= 0 {
		i := strings.LastIndexByte(key, ':')
		if i < 0 {
			return ""
		}
		return key[:i]
	}
	parts := strings.SplitN(key, ":", depth+1)
	if len(parts) <= depth {
		return FamilyOf(key, 0)
	}
	return strings.Join(parts[:depth], ":")
}

// OtherFamilies names the family of keys beyond Options.MaxFamilies.
const OtherFamilies = "(other)"

// Auditor tallies findings over the pages of a scan.
type Auditor struct {
	o        Options
	findings map[FindingKind]*Finding
	families map[string]*Family
	samples  int
	noMemory string
}

// New starts an audit.
func New(o Options) *Auditor {
	o.defaults()
	return &Auditor{o: o, findings: map[FindingKind]*Finding{}, families: map[string]*Family{}}
}

// ttlSlack is how much shorter than the time to full a TTL may be without a finding.
func ttlSlack(l bucket.Layout) time.Duration {
	return 100*time.Millisecond + l.Step() + l.TTLShortfall()
}

// kinds are the findings of one state (hot-slot is found per family, in Report).
func (a *Auditor) kinds(s bucket.State) []FindingKind {
	var out []FindingKind
	if s.Guess != "" {
		out = append(out, FindingUndeclared)
		if s.Bare {
			return out
		}
	}
	if s.Problem != "" {
		switch {
		case s.Counter != "":
			return []FindingKind{FindingCounter}
		case s.Verdict == bucket.Corrupt:
			return []FindingKind{FindingCorrupt}
		case s.HasExtraFields():
			return []FindingKind{FindingExtraFields}
		}
		return nil
	}
	if !s.Exists {
		return out
	}
	if s.HasSpec() && s.Layout.Type != bucket.GCRA && (s.Stored.Tokens > s.Spec.Capacity) {
		out = append(out, FindingOverCapacity)
	}
	switch {
	case s.TTL == -1 && s.Layout.Model().NoTTLByDesign():
		out = append(out, FindingNoTTLByDesign)
	case s.TTL == -1:
		out = append(out, FindingNoTTL)
	case s.TTL > 0 && s.HasSpec():
		if ttf := s.RefillTime(); ttf > 0 && s.TTL < ttf-ttlSlack(s.Layout) {
			out = append(out, FindingTTLShort)
		}
	}
	switch {
	case s.Ahead > 0 && s.Layout.Type == bucket.GCRA:
		out = append(out, FindingGCRADebt)
	case s.Ahead > 0:
		out = append(out, FindingClockAhead)
	}
	if a.o.Cluster && s.Layout.Type == bucket.Strings {
		if k := s.Layout.Keys(s.Key); len(k) == 2 && slot.Of(k[0]) != slot.Of(k[1]) {
			out = append(out, FindingCrossSlot)
		}
	}
	return out
}

// Add tallies one page of states and returns the keys to measure for AddMemory.
func (a *Auditor) Add(states []bucket.State) []MemoryProbe {
	var probes []MemoryProbe
	for _, s := range states {
		fam := a.family(s.Key)
		fam.Keys++
		kinds := a.kinds(s)
		if s.Problem == "" {
			fam.Buckets++
			fam.Layouts[s.Layout.Name]++
			if a.o.Cluster {
				fam.slots[slot.Of(s.Key)]++
			}
		}
		want := fam.Sampled < a.o.Samples
		for _, k := range kinds {
			f := a.finding(k)
			f.Count++
			if len(f.Examples) < a.o.Examples {
				f.Examples = append(f.Examples, s.Key)
			}
			if (k == FindingClockAhead || k == FindingGCRADebt) && s.Ahead > f.MaxAhead {
				f.MaxAhead = s.Ahead
			}
			if k == FindingUndeclared && f.Detail == "" {
				f.Detail = SuggestRule(s)
			}
			if k == FindingCounter {
				f.Detail = counterDetail(f.Detail, s.Counter)
			}
			want = want || f.Sampled < a.o.Samples
		}
		if want && a.o.Samples > 0 && a.samples < a.o.MaxSamples {
			a.samples++
			keys := []string{s.Key}
			if s.Problem == "" {
				keys = s.Layout.Keys(s.Key)
			}
			probes = append(probes, MemoryProbe{Keys: keys, family: fam, kinds: kinds})
			fam.Sampled++ // now, so that a page does not pick more than its share
			for _, k := range kinds {
				a.findings[k].Sampled++
			}
		}
	}
	return probes
}

func (a *Auditor) family(key string) *Family {
	p := FamilyOf(key, a.o.Depth)
	f, ok := a.families[p]
	if !ok {
		if len(a.families) >= a.o.MaxFamilies {
			p = OtherFamilies
			if f, ok = a.families[p]; ok {
				return f
			}
		}
		f = &Family{Prefix: p, Layouts: map[string]int64{}, slots: map[int]int64{}}
		a.families[p] = f
	}
	return f
}

func (a *Auditor) finding(k FindingKind) *Finding {
	f, ok := a.findings[k]
	if !ok {
		f = &Finding{FindingInfo: Findings[slices.IndexFunc(Findings, func(i FindingInfo) bool { return i.Kind == k })]}
		a.findings[k] = f
	}
	return f
}

// Report is the audit's result: findings in report order, families by memory.
type Report struct {
	Findings []Finding
	Families []Family
	Samples  int    // keys measured with MEMORY USAGE
	NoMemory string // why memory was not estimated ("" when it was)
}

// Worst is the highest severity among the findings ("" when none).
func (r Report) Worst() Severity {
	var w Severity
	for _, f := range r.Findings {
		if f.Severity.Rank() > w.Rank() {
			w = f.Severity
		}
	}
	return w
}

// Report computes the estimates and the hot-slot findings.
func (a *Auditor) Report() Report {
	r := Report{Samples: a.samples, NoMemory: a.noMemory}
	if r.NoMemory != "" {
		r.Samples = 0
	}
	fams := make([]Family, 0, len(a.families))
	for _, p := range slices.Sorted(maps.Keys(a.families)) {
		f := a.families[p]
		if f.Sampled > 0 {
			f.Memory = f.memSum * f.Keys / int64(f.Sampled)
		}
		if a.o.Cluster && f.Buckets >= a.o.HotSlotMin {
			slot, n := -1, int64(0)
			for s, c := range f.slots {
				if c > n || (c == n && s < slot) {
					slot, n = s, c
				}
			}
			if 2*n >= f.Buckets {
				h := a.finding(FindingHotSlot)
				h.Count++
				if len(h.Examples) < a.o.Examples {
					h.Examples = append(h.Examples, f.Prefix)
					h.Detail = strings.TrimSpace(fmt.Sprintf("%s %s: %d of %d buckets in slot %d;", h.Detail, f.Prefix, n, f.Buckets, slot))
				}
				h.Memory += f.Memory
			}
		}
		fams = append(fams, *f)
	}
	slices.SortStableFunc(fams, func(x, y Family) int { return cmp.Compare(y.Memory, x.Memory) })
	r.Families = fams
	for _, info := range Findings {
		f, ok := a.findings[info.Kind]
		if !ok {
			continue
		}
		if f.Kind != FindingHotSlot && f.Sampled > 0 {
			f.Memory = f.memSum * f.Count / int64(f.Sampled)
		}
		r.Findings = append(r.Findings, *f)
	}
	return r
}

// SuggestRule is the config-file rule that would declare the layout guessed for s.
func SuggestRule(s bucket.State) string {
	match := "*"
	if pre, suf, ok := strings.Cut(s.Layout.TokensKey, "*"); ok && s.Layout.Type == bucket.Strings && pre+suf != "" {
		match = rules.QuoteGlob(pre) + "*" + rules.QuoteGlob(suf)
	} else if fam := FamilyOf(s.Key, 0); fam != "" {
		match = rules.QuoteGlob(fam) + ":*"
	}
	return fmt.Sprintf(`rules: - {match: %q, layout: %s, capacity: <the library's>, rate: <per second>}`, match, s.Layout.Name)
}

func counterDetail(detail, form string) string {
	f, ok := bucket.LookupCounter(form)
	if !ok || strings.Contains(detail, f.Limiter) {
		return detail
	}
	what := f.Limiter + " (" + f.Pattern + ")"
	if f.Generic() {
		what = "counts with a TTL, like " + what
	}
	if detail == "" {
		return what
	}
	return detail + "; " + what
}
