package cmd

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// FuzzStoredValues feeds arbitrary stored values through the read path (the verdict on a
// hash or a two-key bucket, refilled to now) and the JSON and table output: no panic, valid
// JSON, never non-finite tokens nor negative ones outside Webman's model, and a Problem for
// anything that is not a bucket's finite numbers. The seed corpus runs in every `go test`; explore with
// go test ./cmd -run '^$' -fuzz FuzzStoredValues -fuzztime 60s
func FuzzStoredValues(f *testing.F) {
	seeds := [][6]string{
		{"5", "1700000000000000", "10", "1", "3", "0"},
		{"1e400", "1", "10", "1", "", ""},
		{"5", "99999999999999999999", "10", "1", "", ""},
		{"-5", "1", "1e400", "1e-320", "x", "1"},
		{"nan", "inf", "0x10", "1_0", " 5", "+5"},
		{"5", "1700000000.5", "", "", "", ""},
		{"0", "-1", "10", "0", "9223372036854775807", "-3"},
		{"1e308", "1e308", "1e308", "1e-308", "1e30", "1e30"},
		{"", "", "", "", "", ""},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], uint8(0))
		f.Add(s[0], s[1], s[2], s[3], s[4], s[5], uint8(3))
	}
	const now = int64(1_700_000_000_000_000)
	f.Fuzz(func(t *testing.T, tokens, ts, capacity, rate, allowed, denied string, pick uint8) {
		names := []string{"native", "go-bench", "spring", "multi-tier", "express", "webman"}
		layout := bucket.Presets[names[int(pick)%len(names)]]
		var states []bucket.State
		fields := map[string]string{layout.TokensField: tokens, layout.TimeField: ts}
		if layout.Native {
			fields["capacity"], fields["rate"], fields["allowed"], fields["denied"] = capacity, rate, allowed, denied
		}
		specs := []bucket.Target{{}, {Layout: &layout}, {Layout: &layout, Spec: bucket.Spec{Capacity: 10, Rate: 2}, Source: "flags"}}
		for _, tg := range specs {
			if layout.Type == bucket.Strings {
				states = append(states, bucket.ClassifyTwoKey("k", tokens, ts, -1, now, tg))
			} else {
				states = append(states, bucket.ClassifyHash("k", fields, 5000, now, tg))
			}
		}
		for _, s := range states {
			v := output.StateOf(s)
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("JSON of %+v: %v", s, err)
			}
			if !json.Valid(b) {
				t.Fatalf("invalid JSON %s", b)
			}
			// Tokens are shown as the application reads them: finite, and below zero only
			// for Webman, which refills negatively from a time ahead of its clock.
			if v.Tokens != nil && (math.IsNaN(*v.Tokens) || math.IsInf(*v.Tokens, 0) || *v.Tokens < 0 && s.Layout.Name != "webman") {
				t.Fatalf("tokens %v shown for %+v", *v.Tokens, s)
			}
			if s.Problem == "" && s.Exists {
				for _, x := range []float64{s.Tokens, s.Stored.Tokens, s.Spec.Capacity, s.Spec.Rate} {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("a bucket with a non-finite value %v: %+v", x, s)
					}
				}
				if s.Stored.Tokens < 0 {
					t.Fatalf("negative stored tokens accepted: %+v", s)
				}
			}
			_ = output.ListRow(nil, s, nil)
			_ = output.InspectRow(nil, s, nil)
		}
	})
}
