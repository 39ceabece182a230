package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bucketctl/bucketctl/cmd"
)

// Options are gen's flags, resolved.
type Options struct {
	Dir        string
	Man        bool
	ManDate    time.Time
	ManVersion string
	ManGzip    bool
	Root       *cobra.Command
	// ConfigPath is the config file's default location the help texts name (written
	// portably in the man pages).
	ConfigPath string
}

// Exit codes, as bucketctl's: 2 for a usage error, 1 for a failed write.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// usageError is a mistake in the command line: exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func main() { os.Exit(run(os.Args[1:], os.Stderr, os.Getenv)) }

// run parses args, writes the files and returns the exit code; errors are one line on
// stderr.
func run(args []string, stderr io.Writer, getenv func(string) string) int {
	opts, err := parse(args, stderr, getenv)
	if err == nil {
		err = generate(opts)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintln(stderr, "gen:", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

// parse resolves the flags and builds the command tree the files are made from.
func parse(args []string, stderr io.Writer, getenv func(string) string) (*Options, error) {
	opts := &Options{}
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var date string
	fs.StringVar(&opts.Dir, "dir", "", "directory to write completions/ and man/ into")
	fs.BoolVar(&opts.Man, "man", true, "write man pages too")
	fs.StringVar(&date, "man-date", "", "date in the man pages' header: YYYY-MM-DD or RFC 3339 (default: SOURCE_DATE_EPOCH)")
	fs.StringVar(&opts.ManVersion, "man-version", "dev", "version named in the man pages' header")
	fs.BoolVar(&opts.ManGzip, "man-gzip", false, "write man pages gzip-compressed (.1.gz), as packages install them")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return nil, usagef("takes no arguments, got %q", fs.Args())
	}
	if opts.Dir == "" {
		return nil, usagef("needs --dir DIR")
	}
	if opts.Man {
		d, err := manDate(date, getenv)
		if err != nil {
			return nil, err
		}
		opts.ManDate = d
	}
	f := cmd.NewFactory(&cmd.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		cmd.VersionInfo{Version: opts.ManVersion})
	f.Getenv = getenv
	opts.Root = cmd.NewCmdRoot(f)
	opts.ConfigPath = f.DefaultConfigPath()
	return opts, nil
}

// completionFiles are the shell completion scripts gen writes, by file name: the same
// scripts `bucketctl completion SHELL` prints.
var completionFiles = []struct {
	name string
	gen  func(root *cobra.Command, w io.Writer) error
}{
	{"bucketctl.bash", func(r *cobra.Command, w io.Writer) error { return r.GenBashCompletionV2(w, true) }},
	{"bucketctl.zsh", func(r *cobra.Command, w io.Writer) error { return r.GenZshCompletion(w) }},
	{"bucketctl.fish", func(r *cobra.Command, w io.Writer) error { return r.GenFishCompletion(w, true) }},
	{"bucketctl.ps1", func(r *cobra.Command, w io.Writer) error { return r.GenPowerShellCompletionWithDesc(w) }},
}

// portableConfigPath replaces this machine's config path in the man pages, so that they
// do not depend on the HOME of the machine that generated them.
const portableConfigPath = "~/.config/bucketctl/config.yaml"

// manDate parses --man-date, falling back to SOURCE_DATE_EPOCH; never the clock.
func manDate(s string, getenv func(string) string) (time.Time, error) {
	if s == "" {
		epoch := getenv("SOURCE_DATE_EPOCH")
		if epoch == "" {
			return time.Time{}, usagef("man pages need a date: pass --man-date YYYY-MM-DD or set SOURCE_DATE_EPOCH (or --man=false)")
		}
		sec, err := strconv.ParseInt(epoch, 10, 64)
		if err != nil {
			return time.Time{}, usagef("SOURCE_DATE_EPOCH %q: not a Unix time in seconds", epoch)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, usagef("--man-date %q: want YYYY-MM-DD or RFC 3339", s)
}

func generate(opts *Options) error {
	dir := filepath.Join(opts.Dir, "completions")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range completionFiles {
		var buf bytes.Buffer
		if err := c.gen(opts.Root, &buf); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name), buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if !opts.Man {
		return nil
	}
	pages, err := manPages(opts)
	if err != nil {
		return err
	}
	return writeManPages(filepath.Join(opts.Dir, "man"), pages)
}
