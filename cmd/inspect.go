package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/tui"
)

// InspectOptions are the options of inspect.
type InspectOptions struct {
	Keys   []string
	Match  string
	Spec   SpecFlags
	Output string
}

const layoutsHelp = `Layouts: how a bucket is stored. bucketctl reads and resets all of these; consume and load
use the native one.`

func layoutTable() string {
	var b strings.Builder
	for _, n := range bucket.PresetNames() {
		fmt.Fprintf(&b, "  %-11s %s\n", n, bucket.Presets[n].About)
	}
	return b.String()
}

// NewCmdInspect builds `inspect`.
func NewCmdInspect(f *Factory, runF func(*InspectOptions) error) *cobra.Command {
	opts := &InspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect KEY... | --match PATTERN",
		Short: "Show buckets: tokens refilled to now, spec, TTL, last update, counters",
		Long: `Read buckets without changing them: one pipelined round trip for all the keys given (per
SCAN page with --match). Tokens are refilled to the Redis server's clock when the capacity and
rate are known (from flags, a config rule, or the bucket itself); otherwise the stored tokens
and their age are shown and the output says what is missing.

A key with no rule is recognised by its fields, and the output names the layout assumed.

` + layoutsHelp + "\n\n" + layoutTable() + `
JSON fields: key, type, exists, layout, layout_detected, problem, tokens, stored_tokens,
capacity, rate, spec_source, missing, fill, time_to_full_ms, ttl_ms (-1: none), updated_at,
age_ms, ahead_ms (the stored time is this far ahead of the server's: a fast client clock),
allowed, denied, node (the master serving the key). One KEY prints an object;
several keys or --match print an array. -o wide adds a NODE column to the table.`,
		Example: `  bucketctl inspect rate:user:42
  bucketctl inspect rate:user:42 rate:user:43 -o json
  bucketctl inspect --match 'rate:user:*' -o yaml
  bucketctl inspect api:ip:10.1.2.3 --layout express --capacity 100 --rate 10
  bucketctl inspect --cluster 10.0.0.1:6379 rate:user:42 -o wide`,
		ValidArgsFunction: completeKeys(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Keys = args
			if len(args) == 0 && opts.Match == "" {
				return usagef("inspect needs KEY... or --match PATTERN (see 'bucketctl inspect --help')")
			}
			if len(args) > 0 && opts.Match != "" {
				return usagef("give keys or --match, not both")
			}
			if runF != nil {
				return runF(opts)
			}
			return inspectRun(cmd, f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Match, "match", "", "inspect every key matching this Redis glob pattern (SCAN, never KEYS)")
	opts.Spec.register(cmd, f, false)
	addOutputFlag(cmd, &opts.Output, stateFormats...)
	return cmd
}

func inspectRun(cmd *cobra.Command, f *Factory, opts *InspectOptions) error {
	if err := checkFormat(opts.Output, stateFormats...); err != nil {
		return err
	}
	resolve, err := f.resolver(cmd, &opts.Spec)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	st, err := f.Store(ctx)
	if err != nil {
		return err
	}
	var states []bucket.State
	if opts.Match != "" {
		err = scanStates(ctx, f, st, opts.Match, resolve, func(page []bucket.State) error {
			states = append(states, page...)
			return nil
		})
	} else {
		states, err = st.Inspect(ctx, opts.Keys, resolve)
	}
	if err != nil {
		return err
	}
	node, err := stateNodes(ctx, f, opts.Output)
	if err != nil {
		return err
	}
	if isData(opts.Output) {
		views := stateViews(states, node)
		if len(opts.Keys) == 1 {
			err = writeData(f.IO.Out, opts.Output, views[0])
		} else {
			err = writeData(f.IO.Out, opts.Output, views)
		}
	} else {
		err = printStates(f, states, node)
	}
	if err != nil {
		return err
	}
	return problemsErr(f, states)
}

// scanStates SCANs pattern on every master and inspects each page in one round trip.
func scanStates(ctx context.Context, f *Factory, st *bucket.Store, pattern string, resolve bucket.Resolver, fn func([]bucket.State) error) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	return st.Scan(ctx, pattern, 500, bucket.TimeSuffixes(cfg.CustomLayouts()), func(keys []string) error {
		states, err := st.Inspect(ctx, keys, resolve)
		if err != nil {
			return err
		}
		return fn(states)
	})
}

// problemsErr reports keys that are not buckets: each on stderr, exit 1.
func problemsErr(f *Factory, states []bucket.State) error {
	n := 0
	for _, s := range states {
		if s.Problem != "" {
			n++
			fmt.Fprintf(f.IO.ErrOut, "bucketctl: %s %s (left untouched)\n", s.Key, s.Problem)
		}
	}
	if n > 0 {
		return &SilentError{Code: ExitError}
	}
	return nil
}

// printStates prints the inspect table, with a NODE column when node is not nil (-o wide).
func printStates(f *Factory, states []bucket.State, node func(string) string) error {
	t := newTable(f.IO, "KEY", "LAYOUT", "TOKENS", "CAPACITY", "RATE/S", "FILL", "FULL-IN", "TTL", "UPDATED", "ALLOWED", "DENIED")
	t.node = node
	for _, s := range states {
		if s.Problem != "" {
			t.add(s.Key, "-", "-", "-", "-", "-", "-", fmtTTL(s.TTL), "-", "-", "-")
			continue
		}
		layout := layoutLabel(s)
		tokens, capacity, rate, fill, full := fmtNum(s.Tokens), "?", "?", "?", "?"
		if s.HasSpec() {
			capacity, rate = fmtNum(s.Spec.Capacity), fmtNum(s.Spec.Rate)
			fill, full = fmt.Sprintf("%.0f%%", s.Fill()*100), fmtDur(s.TimeToFull())
		}
		updated := "-"
		switch {
		case !s.Exists && s.HasSpec():
			tokens += " (no key: full)"
		case !s.Exists:
			tokens = "full (no key)"
		case !s.HasSpec():
			tokens += " (stored)"
		}
		if s.Exists {
			updated = fmtDur(s.Age()) + " ago"
		}
		t.add(s.Key, layout, tokens, capacity, rate, fill, full, fmtTTL(s.TTL), updated, fmt.Sprint(s.Allowed), fmt.Sprint(s.Denied))
	}
	if err := t.render(); err != nil {
		return err
	}
	var notes []string
	for _, s := range states {
		if s.Problem == "" && guessedLayout(s) {
			notes = append(notes, "LAYOUT with ? was detected from the key's fields (set --layout or a rule to be sure)")
			break
		}
	}
	for _, s := range states {
		if s.Problem == "" && !s.HasSpec() {
			notes = append(notes, "capacity/rate unknown for some buckets: tokens shown as stored, not refilled (pass --capacity/--rate or add a rule)")
			break
		}
	}
	for _, s := range states {
		if s.Problem == "" && s.Ahead > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s", tui.SafeKey(s.Key), aheadNote(s.Ahead)))
		}
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.ErrOut, "note: "+n)
	}
	return nil
}

// guessedLayout says another application's layout was detected from the key's fields, not
// configured: the reading is a good guess, marked with "?".
func guessedLayout(s bucket.State) bool { return s.Detected && !s.Layout.Native }

// layoutLabel is the LAYOUT column: the layout's name, with "?" when it was guessed.
func layoutLabel(s bucket.State) string {
	if guessedLayout(s) {
		return s.Layout.Name + "?"
	}
	return s.Layout.Name
}
