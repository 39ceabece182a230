package output

import (
	"bufio"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Output formats.
const (
	FormatTable = "table"
	FormatWide  = "wide"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// StateFormats are the -o formats of the commands that print bucket states: wide is the
// table with a NODE column (the master serving the key).
var StateFormats = []string{FormatTable, FormatWide, FormatJSON, FormatYAML, FormatJSONL}

// IsData says format prints data (JSON or YAML) rather than a table.
func IsData(format string) bool { return format == FormatJSON || format == FormatYAML }

// table is a table printed at once: the stream table's layout (display width, so colour
// never moves a column; on a terminal the key column cut in the middle) over all its rows.
type Table struct {
	io *iostreams.IOStreams
	t  *streamTable
}

func NewTable(io *iostreams.IOStreams, header ...string) *Table {
	return &Table{io: io, t: newStreamTable(io, header)}
}

func (t *Table) Add(cells ...string) { t.t.add(cells) }

func (t *Table) Render() error {
	w := bufio.NewWriter(t.io.Out)
	t.t.writePage(w)
	return w.Flush()
}

// ColorStyle is a style for stdout: ANSI colours on a colour terminal, none otherwise,
// whatever the process's own stdout is (the streams may be a test's buffer).
func ColorStyle(io *iostreams.IOStreams) lipgloss.Style {
	r := lipgloss.NewRenderer(io.Out)
	if io.Color() {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r.NewStyle()
}

// ResultView is the JSON/YAML shape of a check or consume decision. Field names are stable
// and those of inspect: tokens and time_to_full_ms. remaining is an alias of tokens and
// reset_after_ms of time_to_full_ms, kept for compatibility. Numbers are rounded by kind
// (tui/format/json.go).
type ResultView struct {
	Key          string  `json:"key"`
	Allowed      bool    `json:"allowed"`
	Tokens       float64 `json:"tokens"`
	Remaining    float64 `json:"remaining"`
	Capacity     float64 `json:"capacity"`
	Rate         float64 `json:"rate"`
	Cost         float64 `json:"cost"`
	RetryAfterMS float64 `json:"retry_after_ms"`
	TimeToFullMS float64 `json:"time_to_full_ms"`
	ResetAfterMS float64 `json:"reset_after_ms"`
	Layout       string  `json:"layout"`
	// Exists says whether the key exists (check only: consume creates it).
	Exists *bool `json:"exists,omitempty"`
	// Note says why a request is never allowed (format.NeverAllowed).
	Note string `json:"note,omitempty"`
	// AppRetryAfterMS is the retry-after the bucket's application itself reports when it
	// differs from the true one (Express truncates it; a stored time ahead is left out).
	AppRetryAfterMS *float64 `json:"app_retry_after_ms,omitempty"`
	// Headers are the HTTP rate-limit headers for the decision (with --headers).
	Headers map[string]string `json:"headers,omitempty"`
	// AheadMS is how far the stored time is ahead of the server's clock (0: not ahead).
	AheadMS float64 `json:"ahead_ms"`
	// RetryAtExpiry and FullAtExpiry say the key's expiry, not the refill, ends the wait:
	// the application starts a full bucket when the key expires.
	RetryAtExpiry bool `json:"retry_at_expiry,omitempty"`
	FullAtExpiry  bool `json:"full_at_expiry,omitempty"`
	// WriterClock is the decision of a caller whose clock reads the stored time now, for an
	// application on its callers' clocks written ahead of the server's; Ambiguous says why
	// the answer depends on the next caller's clock, when it does.
	WriterClock *ClockView `json:"writer_clock,omitempty"`
	Ambiguous   string     `json:"ambiguous,omitempty"`
	// RetryAt, FullAt (the server's time of the read plus the waits) and UpdatedAt, RFC
	// 3339, and the native counters: check only (it reads the bucket).
	RetryAt   string    `json:"retry_at,omitempty"`
	FullAt    string    `json:"full_at,omitempty"`
	UpdatedAt string    `json:"updated_at,omitempty"`
	Counters  *Counters `json:"counters,omitempty"`
}

// Counters are a native bucket's decision counters.
type Counters struct {
	Allowed int64 `json:"allowed"`
	Denied  int64 `json:"denied"`
}

// ClockView is a decision on another clock than the server's.
type ClockView struct {
	Allowed      bool    `json:"allowed"`
	Tokens       float64 `json:"tokens"`
	RetryAfterMS float64 `json:"retry_after_ms"`
	TimeToFullMS float64 `json:"time_to_full_ms"`
}

func ResultOf(key string, r bucket.Result, cost float64, layout string) ResultView {
	tokens, full := format.JSONTokens(r.Remaining), format.JSONMS(r.ResetAfter)
	v := ResultView{Key: key, Allowed: r.Allowed, Tokens: tokens, Remaining: tokens, Capacity: format.JSONSpec(r.Spec.Capacity),
		Rate: format.JSONSpec(r.Spec.Rate), Cost: format.JSONSpec(cost), RetryAfterMS: format.JSONRetryAfter(r.RetryAfter), TimeToFullMS: full,
		ResetAfterMS: full, Layout: layout}
	return v
}

// StateView is the JSON/YAML shape of an inspected bucket. Field names are stable; times
// are RFC 3339, durations milliseconds; ttl_ms is -1 for no TTL and -2 for no such key.
// Numbers are rounded by kind (tui/format/json.go).
type StateView struct {
	Key            string `json:"key"`
	Type           string `json:"type"`
	Exists         bool   `json:"exists"`
	Layout         string `json:"layout,omitempty"`
	LayoutDetected bool   `json:"layout_detected"`
	// LayoutGuess says the layout was guessed from a lone bare number no rule or --layout
	// declares, and how to declare it: such a key is never written or deleted.
	LayoutGuess  string   `json:"layout_guess,omitempty"`
	Problem      string   `json:"problem,omitempty"`
	Tokens       *float64 `json:"tokens"`
	StoredTokens *float64 `json:"stored_tokens"`
	Capacity     *float64 `json:"capacity"`
	Rate         *float64 `json:"rate"`
	SpecSource   string   `json:"spec_source,omitempty"`
	Missing      string   `json:"missing,omitempty"`
	Fill         *float64 `json:"fill,omitempty"`
	TimeToFullMS *float64 `json:"time_to_full_ms,omitempty"`
	// Cost is what RetryAfterMS waits for (--cost, a rule's, else 1); RetryAt and FullAt
	// are the server's time of the read plus the waits (RFC 3339; no retry_at: never).
	Cost         *float64 `json:"cost,omitempty"`
	RetryAfterMS *float64 `json:"retry_after_ms,omitempty"`
	RetryAt      string   `json:"retry_at,omitempty"`
	FullAt       string   `json:"full_at,omitempty"`
	TTLMS        float64  `json:"ttl_ms"`
	UpdatedAt    string   `json:"updated_at,omitempty"`
	AgeMS        float64  `json:"age_ms"`
	AheadMS      float64  `json:"ahead_ms"`
	// FullAtExpiry: the key expires before the refill ends, so time_to_full_ms is its TTL.
	FullAtExpiry bool `json:"full_at_expiry,omitempty"`
	// Ambiguous says why the figures depend on something bucketctl cannot read.
	Ambiguous string `json:"ambiguous,omitempty"`
	// WriterClock: the figures on the clock of the caller that wrote ahead (see ResultView).
	WriterClock *ClockView `json:"writer_clock,omitempty"`
	Allowed     int64      `json:"allowed"`
	Denied      int64      `json:"denied"`
	Node        string     `json:"node,omitempty"`
}

// StateOf is s's view, its retry-after for a cost of 1.
func StateOf(s bucket.State) StateView { return StateOfCost(s, 1) }

// StateOfCost is s's view, its retry-after for cost.
func StateOfCost(s bucket.State, cost float64) StateView {
	v := StateView{Key: s.Key, Type: s.Type, Exists: s.Exists, Problem: s.Problem,
		LayoutDetected: s.Detected, Allowed: s.Allowed, Denied: s.Denied,
		AgeMS: format.JSONMS(s.Age()), AheadMS: format.JSONMS(s.Ahead), TTLMS: format.JSONTTL(s.TTL)}
	if s.LevelKnown() {
		stored := format.JSONTokens(s.Stored.Tokens)
		v.StoredTokens = &stored
	}
	if s.Problem != "" {
		return v
	}
	v.Layout = s.Layout.Name
	if s.Guess != "" {
		v.LayoutGuess = s.Guess + "; " + format.DeclareHint(s.Layout.Name)
	}
	if s.Exists && s.Stored.TS != 0 {
		v.UpdatedAt = s.UpdatedAt().UTC().Format(time.RFC3339Nano)
	}
	if s.HasSpec() {
		tokens, c, r := format.JSONTokens(s.Tokens), format.JSONSpec(s.Spec.Capacity), format.JSONSpec(s.Spec.Rate)
		d, dc := s.Decide(0), s.Decide(cost)
		fill, ttf := format.JSONRatio(s.Fill()), format.JSONMS(d.ResetAfter)
		v.Tokens, v.Capacity, v.Rate, v.Fill, v.TimeToFullMS = &tokens, &c, &r, &fill, &ttf
		jc, retry := format.JSONSpec(cost), format.JSONRetryAfter(dc.RetryAfter)
		v.Cost, v.RetryAfterMS = &jc, &retry
		v.RetryAt, v.FullAt = ServerTime(s.Now, dc.RetryAfter), ServerTime(s.Now, d.ResetAfter)
		v.SpecSource = s.SpecSource
		v.FullAtExpiry = d.FullByExpiry
		if s.Ambiguous() {
			v.Ambiguous = AmbiguityNote(s)
		}
		if d1 := s.Decide(1); d1.Writer != nil {
			v.WriterClock = ClockOf(*d1.Writer)
		}
	} else if s.LevelKnown() {
		v.Missing = "capacity and rate: tokens are as stored, not refilled (pass --capacity/--rate or add a rule)"
	} else {
		v.Missing = "capacity and rate: a GCRA bucket stores a TAT, whose tokens need them (pass --capacity/--rate or add a rule)"
	}
	return v
}

// ServerTime is the server's time now (microseconds) plus d, in RFC 3339 (UTC); "" for a
// negative d (never) or an unknown now.
func ServerTime(now int64, d time.Duration) string {
	if d < 0 || now <= 0 {
		return ""
	}
	return time.UnixMicro(now).Add(d).UTC().Format(time.RFC3339Nano)
}

func ColorVerdict(io *iostreams.IOStreams, ok bool, s string) string {
	c := lipgloss.Color("1")
	if ok {
		c = lipgloss.Color("2")
	}
	return ColorStyle(io).Foreground(c).Bold(true).Render(s)
}

func ClockOf(d bucket.Decision) *ClockView {
	return &ClockView{Allowed: d.Allowed, Tokens: format.JSONTokens(d.Remaining), RetryAfterMS: format.JSONRetryAfter(d.RetryAfter), TimeToFullMS: format.JSONMS(d.ResetAfter)}
}
