package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/load"
	"github.com/bucketctl/bucketctl/bucket/redistest"
	"github.com/bucketctl/bucketctl/cmd/connect"
	"github.com/bucketctl/bucketctl/cmd/output"
)

// Every command's run is called here without cobra: an Env, its Options, a real server.

// directEnv is the Env of a run called without cobra, on the server at url (the root's
// flags carry it, as on a command line), with stdout and stderr.
func directEnv(t *testing.T, url string) (Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	io, _, out, errOut := testStreams()
	f := newTestFactory(t, io, VersionInfo{Version: "test"})
	fl := pflag.NewFlagSet("bucketctl", pflag.ContinueOnError)
	connect.AddFlags(fl, f.DefaultConfigPath(), durationFlag)
	if err := fl.Parse([]string{"--url", url}); err != nil {
		t.Fatal(err)
	}
	f.Flags = fl
	t.Cleanup(f.Close)
	return f.env(context.Background()), out, errOut
}

// spec10 are --capacity 10 --rate 1, as given on a command line.
var spec10 = SpecFlags{Capacity: 10, Rate: 1, CapacitySet: true, RateSet: true, Cost: 1}

func TestRunsWithoutCobra(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	url := srv.URL()

	// consume creates the bucket: 10 - 3 tokens.
	env, out, _ := directEnv(t, url)
	if err := decideRun(&DecideOptions{Env: env, Key: "direct:a", Spec: withCost(spec10, 3), Output: output.FormatJSON}); err != nil {
		t.Fatal(err)
	}
	var rv output.ResultView
	if err := json.Unmarshal(out.Bytes(), &rv); err != nil || !rv.Allowed || rv.Capacity != 10 || rv.Cost != 3 || rv.Tokens < 7 || rv.Tokens > 7.1 {
		t.Fatalf("consume: %v %+v (%s)", err, rv, out)
	}

	t.Run("check", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		err := decideRun(&DecideOptions{Env: env, Key: "direct:a", Spec: withCost(SpecFlags{}, 8), Output: output.FormatJSON, peek: true})
		var denied *DeniedError
		if !errors.As(err, &denied) || denied.Key != "direct:a" || !strings.Contains(out.String(), `"allowed": false`) {
			t.Fatalf("check of 8 on 7 tokens: %v, %s", err, out)
		}
	})
	t.Run("inspect", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		if err := inspectRun(&InspectOptions{Env: env, Keys: []string{"direct:a"}, Selection: Selection{Output: output.FormatJSON}}); err != nil {
			t.Fatal(err)
		}
		var v output.StateView
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Key != "direct:a" || v.Layout != "native" || v.Capacity == nil || *v.Capacity != 10 || v.Allowed != 1 {
			t.Fatalf("inspect: %v %+v (%s)", err, v, out)
		}
	})
	t.Run("list", func(t *testing.T) {
		env, out, errOut := directEnv(t, url)
		if err := listRun(&ListOptions{Env: env, Selection: Selection{Match: "direct:*", Output: output.FormatJSONL}}); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"key":"direct:a"`) {
			t.Fatalf("list: %q (stderr %q)", out, errOut)
		}
	})
	t.Run("list --hot", func(t *testing.T) {
		env, out, errOut := directEnv(t, url)
		if err := listHotRun(&ListOptions{Env: env, Selection: Selection{Match: "direct:*", Output: output.FormatJSON, Limit: 5}, Hot: true, For: 200 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(out.String()) != "[]" || !strings.Contains(errOut.String(), "hot: ranked by") {
			t.Fatalf("list --hot with no writes: %q, stderr %q", out, errOut)
		}
	})
	t.Run("audit", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		if err := auditRun(&AuditOptions{Env: env, Selection: Selection{Match: "direct:*", Output: output.FormatJSON}, Samples: 1, FailOn: "none"}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"buckets": 1`) {
			t.Fatalf("audit: %s", out)
		}
	})
	t.Run("watch", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		if err := watchRun(&WatchOptions{Env: env, Key: "direct:a", Interval: 10 * time.Millisecond, Count: 2, Window: time.Second,
			Spec: withCost(SpecFlags{}, 1), Output: output.FormatJSON}); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), `"key":"direct:a"`); n != 2 {
			t.Fatalf("watch --count 2: %d lines: %s", n, out)
		}
	})
	t.Run("top", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		err := topRun(&TopOptions{Env: env, TopParams: TopParams{Match: "direct:*", Interval: time.Second, PageSize: 10, Budget: 1000}})
		if code := ExitCode(err); code != ExitUsage || out.Len() != 0 {
			t.Fatalf("top without a terminal: exit %d (%v), stdout %q", code, err, out)
		}
		env.IO.StdoutTTY = true
		if err := topRun(&TopOptions{Env: env, TopParams: TopParams{Match: "direct:*", Interval: 50 * time.Millisecond,
			PageSize: 10, Budget: 1000}, Duration: 500 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "direct:a") {
			t.Fatalf("top's screen never showed the bucket: %q", out)
		}
	})
	t.Run("load", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		c := load.Config{Key: load.KeyFor("direct", false), Spec: bucket.Spec{Capacity: 10, Rate: 10}, Cost: 1, Concurrency: 2,
			Requests: 40, Pipeline: 1, WatchRetries: load.DefaultWatchRetries, Strategy: load.Lua, Arrival: load.Closed}
		if err := loadRun(&LoadOptions{Env: env, Key: "direct", Config: c, Output: output.FormatJSON}); err != nil {
			t.Fatal(err)
		}
		var rep load.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Requests != 40 || rep.Allowed < 10 {
			t.Fatalf("load: %v %+v", err, rep)
		}
		if n, err := srv.Client(t).Exists(context.Background(), c.Key).Result(); err != nil || n != 0 {
			t.Fatalf("the run's key is left behind: %d %v", n, err)
		}
	})
	// reset last: it refills the native bucket (written full).
	t.Run("reset", func(t *testing.T) {
		env, out, _ := directEnv(t, url)
		if err := resetRun(&ResetOptions{Env: env, Keys: []string{"direct:a"}, Yes: true, Selection: Selection{Output: output.FormatJSON}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"outcome": "reset"`) {
			t.Fatalf("reset: %s", out)
		}
		assertFull(t, srv.Client(t), "direct:a")
	})
}

func withCost(s SpecFlags, cost float64) SpecFlags {
	s.Cost, s.withCost = cost, true
	return s
}

// Flags alone: each command's runF sees its flags parsed into Options, the flags given
// (spec flags, --tokens) among them, and nothing dials (the URL is unreachable).
func TestFlagsIntoOptions(t *testing.T) {
	t.Parallel()
	f := newTestFactory(t, &IOStreams{}, VersionInfo{})
	exec := func(c interface {
		SetArgs([]string)
		Execute() error
	}, args ...string) {
		t.Helper()
		c.SetArgs(args)
		if err := c.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	var ins *InspectOptions
	exec(NewCmdInspect(f, func(o *InspectOptions) error { ins = o; return nil }), "--match", "rate:*", "-n", "7", "--all", "--capacity", "5", "--rate", "2/s", "-o", "wide")
	if ins.Match != "rate:*" || ins.Limit != 7 || !ins.All || !ins.Spec.CapacitySet || !ins.Spec.RateSet || ins.Spec.CostSet ||
		ins.Spec.Capacity != 5 || ins.Spec.Rate != 2 || ins.Output != output.FormatWide || ins.IO != f.IO || ins.Ctx == nil {
		t.Errorf("inspect: %+v", ins)
	}
	var aud *AuditOptions
	exec(NewCmdAudit(f, func(o *AuditOptions) error { aud = o; return nil }), "--match", "a:*", "--fail-on", "error", "--depth", "2", "--samples", "0", "--layout", "express")
	if aud.Match != "a:*" || aud.FailOn != "error" || aud.Depth != 2 || aud.Samples != 0 || aud.Spec.Layout != "express" || aud.Spec.CapacitySet {
		t.Errorf("audit: %+v", aud)
	}
	var rst *ResetOptions
	exec(NewCmdReset(f, func(o *ResetOptions) error { rst = o; return nil }), "k1", "k2", "--tokens", "0", "--dry-run", "--capacity", "3", "--rate", "1")
	if len(rst.Keys) != 2 || !rst.TokensSet || rst.Tokens != 0 || !rst.DryRun || rst.Yes || !rst.Spec.CapacitySet {
		t.Errorf("reset --tokens 0: %+v", rst)
	}
	exec(NewCmdReset(f, func(o *ResetOptions) error { rst = o; return nil }), "--match", "x:*", "--ignore-missing", "-y")
	if rst.Match != "x:*" || rst.TokensSet || !rst.IgnoreMissing || !rst.Yes {
		t.Errorf("reset --match: %+v", rst)
	}
	exec(NewCmdReset(f, func(o *ResetOptions) error { rst = o; return nil }), "k", "--empty")
	if !rst.TokensSet || !rst.Empty {
		t.Errorf("reset --empty: %+v", rst)
	}
	var dec *DecideOptions
	exec(NewCmdConsume(f, func(o *DecideOptions) error { dec = o; return nil }), "k", "--cost", "2.5", "--headers", "-o", "yaml")
	if dec.Key != "k" || dec.peek || !dec.Spec.CostSet || dec.Spec.Cost != 2.5 || dec.Spec.CapacitySet || !dec.Headers || dec.Output != output.FormatYAML {
		t.Errorf("consume: %+v", dec)
	}
	exec(NewCmdCheck(f, func(o *DecideOptions) error { dec = o; return nil }), "k")
	if !dec.peek || dec.Spec.CostSet || dec.Spec.Cost != 1 {
		t.Errorf("check: %+v", dec)
	}
	var lst *ListOptions
	exec(NewCmdList(f, func(o *ListOptions) error { lst = o; return nil }), "--hot", "--for", "2s")
	if !lst.Hot || lst.For != 2*time.Second || lst.Limit != defaultHotLimit || lst.Match != "*" {
		t.Errorf("list --hot: %+v", lst)
	}
}
