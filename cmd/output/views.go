package output

import (
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

const (
	FormatTable = "table"
	FormatWide  = "wide"
	FormatJSON  = "json"
	FormatYAML  = "yaml"
)

// StateFormats are the -o formats of the commands that print states (wide adds NODE).
var StateFormats = []string{FormatTable, FormatWide, FormatJSON, FormatYAML, FormatJSONL}

// IsData says format prints data (JSON or YAML) rather than a table.
func IsData(format string) bool { return format == FormatJSON || format == FormatYAML }

// ColorStyle is a style for io's stdout: ANSI colours on a colour terminal, none otherwise.
func ColorStyle(io *iostreams.IOStreams) lipgloss.Style {
	r := lipgloss.NewRenderer(io.Out)
	if io.Color() {
		r.SetColorProfile(termenv.ANSI)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return r.NewStyle()
}

// ResultView is the JSON/YAML shape of a check or consume decision ('bucketctl check
// --help' documents its fields); remaining and reset_after_ms are aliases.
type ResultView struct {
	Key             string            `json:"key"`
	Allowed         bool              `json:"allowed"`
	Tokens          float64           `json:"tokens"`
	Remaining       float64           `json:"remaining"`
	Capacity        float64           `json:"capacity"`
	Rate            float64           `json:"rate"`
	Cost            float64           `json:"cost"`
	RetryAfterMS    float64           `json:"retry_after_ms"`
	TimeToFullMS    float64           `json:"time_to_full_ms"`
	ResetAfterMS    float64           `json:"reset_after_ms"`
	Layout          string            `json:"layout"`
	Exists          *bool             `json:"exists,omitempty"` // check only
	Note            string            `json:"note,omitempty"`
	AppRetryAfterMS *float64          `json:"app_retry_after_ms,omitempty"`
	Headers         map[string]string `json:"headers,omitempty"`
	AheadMS         float64           `json:"ahead_ms"`
	RetryAtExpiry   bool              `json:"retry_at_expiry,omitempty"`
	FullAtExpiry    bool              `json:"full_at_expiry,omitempty"`
	WriterClock     *ClockView        `json:"writer_clock,omitempty"`
	Ambiguous       string            `json:"ambiguous,omitempty"`
	RetryAt         string            `json:"retry_at,omitempty"` // check only, from here on
	FullAt          string            `json:"full_at,omitempty"`
	UpdatedAt       string            `json:"updated_at,omitempty"`
	Counters        *Counters         `json:"counters,omitempty"`
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

// StateView is the JSON/YAML shape of an inspected bucket ('bucketctl inspect --help').
type StateView struct {
	Key            string     `json:"key"`
	Type           string     `json:"type"`
	Exists         bool       `json:"exists"`
	Layout         string     `json:"layout,omitempty"`
	LayoutDetected bool       `json:"layout_detected"`
	LayoutGuess    string     `json:"layout_guess,omitempty"`
	Problem        string     `json:"problem,omitempty"`
	Tokens         *float64   `json:"tokens"`
	StoredTokens   *float64   `json:"stored_tokens"`
	Capacity       *float64   `json:"capacity"`
	Rate           *float64   `json:"rate"`
	SpecSource     string     `json:"spec_source,omitempty"`
	Missing        string     `json:"missing,omitempty"`
	Fill           *float64   `json:"fill,omitempty"`
	TimeToFullMS   *float64   `json:"time_to_full_ms,omitempty"`
	Cost           *float64   `json:"cost,omitempty"`
	RetryAfterMS   *float64   `json:"retry_after_ms,omitempty"`
	RetryAt        string     `json:"retry_at,omitempty"`
	FullAt         string     `json:"full_at,omitempty"`
	TTLMS          float64    `json:"ttl_ms"`
	UpdatedAt      string     `json:"updated_at,omitempty"`
	AgeMS          float64    `json:"age_ms"`
	AheadMS        float64    `json:"ahead_ms"`
	FullAtExpiry   bool       `json:"full_at_expiry,omitempty"`
	Ambiguous      string     `json:"ambiguous,omitempty"`
	WriterClock    *ClockView `json:"writer_clock,omitempty"`
	Allowed        int64      `json:"allowed"`
	Denied         int64      `json:"denied"`
	Node           string     `json:"node,omitempty"`
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
		if cost != 1 {
			dc = s.Decide(1)
		}
		if dc.Writer != nil {
			v.WriterClock = ClockOf(*dc.Writer)
		}
	} else if s.LevelKnown() {
		v.Missing = "capacity and rate: tokens are as stored, not refilled (pass --capacity/--rate or add a rule)"
	} else {
		v.Missing = "capacity and rate: a GCRA bucket stores a TAT, whose tokens need them (pass --capacity/--rate or add a rule)"
	}
	return v
}

// ServerTime is the server's time now (µs) plus d in RFC 3339; "" for never or no now.
func ServerTime(now int64, d time.Duration) string {
	if d < 0 || now <= 0 {
		return ""
	}
	return time.UnixMicro(now).Add(d).UTC().Format(time.RFC3339Nano)
}

func ClockOf(d bucket.Decision) *ClockView {
	return &ClockView{Allowed: d.Allowed, Tokens: format.JSONTokens(d.Remaining), RetryAfterMS: format.JSONRetryAfter(d.RetryAfter), TimeToFullMS: format.JSONMS(d.ResetAfter)}
}
