package output

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/httplimit"
	"github.com/bucketctl/bucketctl/cmd/iostreams"
	"github.com/bucketctl/bucketctl/tui/format"
)

// DecisionOf says what a decision was about (Peek: a check) and how to print it.
type DecisionOf struct {
	Key, Layout           string
	Cost                  float64
	Exists, Peek, Headers bool
	Format                string
	Now                   time.Time
	State                 *bucket.State // the bucket a check read; nil for a consume
}

// PrintDecision prints a decision of check or consume: a line (notes on stderr) or a ResultView.
func PrintDecision(io *iostreams.IOStreams, d bucket.Decision, p DecisionOf) error {
	layout, exists, preset := p.Layout, p.Exists, bucket.Presets[p.Layout]
	res := d.Result
	jt, full := format.JSONTokens(res.Remaining), format.JSONMS(res.ResetAfter)
	v := ResultView{Key: p.Key, Allowed: res.Allowed, Tokens: jt, Remaining: jt, Capacity: format.JSONSpec(res.Spec.Capacity),
		Rate: format.JSONSpec(res.Spec.Rate), Cost: format.JSONSpec(p.Cost), RetryAfterMS: format.JSONRetryAfter(res.RetryAfter),
		TimeToFullMS: full, ResetAfterMS: full, Layout: layout}
	if p.Peek {
		v.Exists = &exists
	}
	var notes []string
	if res.RetryAfter < 0 {
		v.Note = format.NeverAllowed
	}
	if d.AppDiffers(preset.Step()) {
		app := format.JSONMS(d.AppRetryAfter)
		v.AppRetryAfterMS = &app
		notes = append(notes, fmt.Sprintf("%s will report retry-after %s; the true wait is %s", layout, format.Wait(d.AppRetryAfter), format.RetryAfter(res.RetryAfter)))
	}
	v.AheadMS = format.JSONMS(d.Ahead)
	if at := res.At; p.State == nil && !at.IsZero() {
		now := at.UnixMicro()
		v.RetryAt, v.FullAt = ServerTime(now, res.RetryAfter), ServerTime(now, res.ResetAfter)
		v.UpdatedAt = at.UTC().Format(time.RFC3339Nano)
	}
	if s := p.State; s != nil {
		v.RetryAt, v.FullAt = ServerTime(s.Now, res.RetryAfter), ServerTime(s.Now, res.ResetAfter)
		if s.Exists && s.Stored.TS != 0 {
			v.UpdatedAt = s.UpdatedAt().UTC().Format(time.RFC3339Nano)
		}
		if s.Layout.Native {
			v.Counters = &Counters{Allowed: s.Allowed, Denied: s.Denied}
		}
	}
	v.RetryAtExpiry, v.FullAtExpiry = d.RetryByExpiry, d.FullByExpiry
	if d.RetryByExpiry {
		notes = append(notes, fmt.Sprintf("the key expires in %s, before enough tokens refill: %s then starts a full bucket", format.Wait(res.RetryAfter), layout))
	}
	if d.Ahead > 0 {
		notes = append(notes, AheadNoteFor(preset, d.Ahead))
	}
	if d.Writer != nil {
		v.WriterClock = ClockOf(*d.Writer)
		if d.ClockSplit(preset.Step()) {
			w := d.Writer
			v.Ambiguous = fmt.Sprintf("%s decides on its caller's clock: a caller on the server's clock gets the answer above; the writer's clock (%s) gets %s, tokens %s, retry-after %s",
				layout, format.AheadShort(d.Ahead), verdictWord(w.Allowed), format.Tokens(w.Remaining), format.RetryAfter(w.RetryAfter))
			notes = append(notes, v.Ambiguous)
		}
	}
	if p.Headers {
		headers := httplimit.Headers("default", res, p.Now)
		v.Headers = map[string]string{}
		for _, k := range headerOrder {
			if val := headers.Get(k); val != "" {
				v.Headers[k] = val
			}
		}
	}
	if p.Format != FormatTable {
		return WriteData(io.Out, p.Format, v)
	}
	for _, n := range notes {
		fmt.Fprintln(io.ErrOut, "note: "+n)
	}
	verdict := verdictWord(res.Allowed)
	if io.Color() {
		verdict = ColorStyle(io).Foreground(map[bool]lipgloss.Color{true: "2", false: "1"}[res.Allowed]).Bold(true).Render(verdict)
	}
	tokens := "tokens " + format.Tokens(res.Remaining) + "/" + format.Tokens(res.Spec.Capacity)
	if !exists {
		tokens = "no such key (new and full: " + tokens + ")"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s  retry-after %s  full-in %s\n", verdict, format.SafeKey(p.Key),
		tokens, format.RetryAfter(res.RetryAfter), format.Wait(res.ResetAfter))
	if v.Headers != nil {
		b.WriteString(map[bool]string{true: "HTTP/1.1 200 OK\n", false: "HTTP/1.1 429 Too Many Requests\n"}[res.Allowed])
		for _, k := range headerOrder {
			if val, ok := v.Headers[k]; ok {
				fmt.Fprintf(&b, "%s: %s\n", k, val)
			}
		}
	}
	_, err := fmt.Fprint(io.Out, b.String())
	return err
}

// AheadNoteFor says what a stored time ahead of the server's means: GCRA debt, else a
// client clock running fast.
func AheadNoteFor(l bucket.Layout, d time.Duration) string {
	if l.Type == bucket.GCRA {
		return format.Debt(d) + "; the library waits it out"
	}
	return "stored time " + format.Ahead(d)
}

// AmbiguityNote says why an ambiguous bucket's figures depend on the next caller's clock.
func AmbiguityNote(s bucket.State) string {
	return fmt.Sprintf("%s decides on its caller's clock, and a caller whose clock runs fast wrote it %s: "+
		"the next caller's clock decides (figures are on the server's clock; writer_clock in JSON)", s.Layout.Name, format.AheadShort(s.Ahead))
}

func verdictWord(ok bool) string {
	if ok {
		return "allowed"
	}
	return "denied"
}

// headerOrder lists the rate-limit headers as APIs spell them, in a readable order.
var headerOrder = []string{"RateLimit-Policy", "RateLimit", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}
