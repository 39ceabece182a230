package bucket_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/scripts"
)

// grammarCases are strings other languages and libraries write or accept as numbers, and
// the one grammar's verdict on each: true = a number.
var grammarCases = map[string]bool{
	"5": true, "-3.25": true, "+5": true, "-0": true, "0": true, ".5": true, "5.": true,
	"1e5": true, "1E-3": true, "1e+5": true, "1.7000000000000001e+09": true, "1e-05": true,
	"1e-400": true, "1.7976931348623157e308": true, "+.5e-3": true, "00012": true,
	strings.Repeat("9", 64): true, "-" + strings.Repeat("1", 63): true,

	"inf": false, "-inf": false, "+inf": false, "Inf": false, "INF": false, "NaN": false,
	"nan": false, "-nan": false, "Infinity": false, "-Infinity": false, "0x10": false,
	"0X1p3": false, "0x1p-2": false, " 5": false, "5 ": false, "\t5": false, "5\n": false,
	"\n5": false, "5\x00": false, "5\x006": false, "1e999": false, "-1e999": false,
	"1.8e308": false, "1_000": false, "1,5": false, "": false, "+": false, "-": false,
	".": false, "e5": false, "1e": false, "1e+": false, "1e-": false, "٣": false,
	"５": false, strings.Repeat("9", 65): false, "-" + strings.Repeat("1", 64): false,
	"--5": false, "+-5": false, "5-": false, "1.2.3": false, "1e5e5": false, "1e5.5": false,
	".e5": false, "five": false, "0b101": false, "0o17": false, "1d5": false, "1f": false,
	"true": false, "\u00a05": false,
}

// TestNumberGrammarLuaEqualsGo runs every case through the Lua side (the prelude's num(), by
// EVAL on a real server, the function every script uses) and the Go side (ParseNumber), and
// requires the same verdict; an overflow must be flagged as such on both sides (a reader
// calls it corrupt). The prelude's ranges must equal the Go constants.
func TestNumberGrammarLuaEqualsGo(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	c := srv.Client(t)
	ctx := context.Background()
	cases := make([]string, 0, len(grammarCases))
	args := make([]interface{}, 0, len(grammarCases))
	for s := range grammarCases {
		cases = append(cases, s)
		args = append(args, s)
	}
	src := scripts.Prelude + scripts.PreludeCall + `
local out = {}
for i = 1, #ARGV do
  local n, over = num(ARGV[i])
  if n ~= nil then out[i] = 'ok ' .. string.format('%.17g', n)
  elseif over then out[i] = 'overflow'
  else out[i] = 'no' end
end
return out`
	got, err := c.Eval(ctx, src, nil, args...).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range cases {
		v, ok := bucket.ParseNumber(s)
		if ok != grammarCases[s] {
			t.Errorf("Go ParseNumber(%q) = %v, want %v", s, ok, grammarCases[s])
		}
		luaOK := strings.HasPrefix(got[i], "ok ")
		if luaOK != grammarCases[s] {
			t.Errorf("Lua num(%q) = %s, want a number: %v", s, got[i], grammarCases[s])
		}
		if luaOK && ok {
			var lv float64
			if _, err := fmt.Sscan(strings.TrimPrefix(got[i], "ok "), &lv); err != nil || lv != v && !(math.IsNaN(lv) && math.IsNaN(v)) {
				t.Errorf("%q: Lua reads %s, Go %v", s, got[i], v)
			}
		}
		if over := bucket.NumberOverflows(s); over != (got[i] == "overflow") {
			t.Errorf("%q: Go says overflow %v, Lua %s", s, over, got[i])
		}
	}
	for _, want := range []string{"1e999", "-1e999", "1.8e308"} {
		if !bucket.NumberOverflows(want) {
			t.Errorf("%q not flagged as an overflow", want)
		}
	}

	consts, err := c.Eval(ctx, scripts.Prelude+`
return { string.format('%.17g', MAX_TOKENS), string.format('%.17g', MAX_TIME_US),
  string.format('%.17g', MAX_COUNTER), string.format('%.17g', MAX_REFILL_S) }`, nil).StringSlice()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range bucket.StoredRanges() {
		var got float64
		if _, err := fmt.Sscan(consts[i], &got); err != nil || got != want {
			t.Errorf("prelude range %d is %s, Go's is %v", i, consts[i], want)
		}
	}
}
