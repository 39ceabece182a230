package cmd

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestStartupStaysLight guards what every run pays before main: the man-page generator and
// its markdown library are not linked (they live in scripts/gen), and bucketctl's own
// packages build nothing heavy at init (a regular expression compiled or a table built
// there costs every run, version included: make it on first use). Allocations are counted,
// not time: GODEBUG=inittrace=1 reports both per package. The chart's rune tables stay
// out of start-up too.
func TestStartupStaysLight(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	mods, err := exec.Command("go", "version", "-m", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go version -m: %v\n%s", err, mods)
	}
	for _, m := range []string{"github.com/russross/blackfriday", "github.com/cpuguy83/go-md2man"} {
		if strings.Contains(string(mods), m) {
			t.Errorf("%s is linked into bucketctl: man pages are made by scripts/gen", m)
		}
	}

	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("version: %v\n%s", err, out)
	}
	// init github.com/bucketctl/bucketctl/bucket @1.3 ms, 0.013 ms clock, 2800 bytes, 51 allocs
	const budget = 16 << 10
	var total int64
	var ours []string
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 10 || f[0] != "init" {
			continue
		}
		n, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil || f[8] != "bytes," {
			t.Fatalf("unexpected inittrace line %q", l)
		}
		if f[1] == "github.com/NimbleMarkets/ntcharts/canvas/runes" && n != 0 {
			// The chart's rune tables are maps built at init once the code reading them is
			// linked: tui draws its lines with its own tables (tui/chartline.go).
			t.Errorf("the chart's rune tables are built at start-up (%d bytes): %s", n, l)
		}
		if !strings.HasPrefix(f[1], "github.com/bucketctl/bucketctl") {
			continue
		}
		total += n
		ours = append(ours, f[1]+" "+f[7]+" bytes")
	}
	if len(ours) == 0 {
		t.Fatalf("no init of bucketctl's packages in the trace:\n%s", out)
	}
	if total > budget {
		t.Errorf("bucketctl's packages allocate %d bytes at init (budget %d): %s", total, budget, strings.Join(ours, "; "))
	}
}
