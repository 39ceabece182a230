package cmd

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// GenOptions are the flags of the hidden gen command.
type GenOptions struct {
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

// completionFiles are the shell completion scripts gen writes, by file name. The
// committed copies in completions/ are these files, regenerated with `make gen`.
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

// NewCmdGen is the hidden command that writes the generated files: shell completions and
// man pages. Release builds run it as a GoReleaser before-hook (no shell needed).
func NewCmdGen(f *Factory, runF func(*GenOptions) error) *cobra.Command {
	opts := &GenOptions{}
	var date string
	cmd := &cobra.Command{
		Use:    "gen --dir DIR",
		Short:  "Write shell completions and man pages (for releases and packagers)",
		Hidden: true,
		Long: `Write DIR/completions/bucketctl.{bash,zsh,fish,ps1} and, unless --man=false, one man
page per command as DIR/man/bucketctl*.1 (or .1.gz with --man-gzip). Stale bucketctl man
pages in DIR/man are removed.

Man pages carry no build date: their date is --man-date, else SOURCE_DATE_EPOCH, so the
same source and date always give the same bytes.`,
		Example: `  make gen                                           # the committed completions/
  bucketctl gen --dir . --man=false                  # the same
  bucketctl gen --dir dist-gen --man-date 2024-03-05 --man-version 1.2.3 --man-gzip`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Dir == "" {
				return usagef("gen needs --dir DIR (see '%s --help')", cmd.CommandPath())
			}
			if opts.Man {
				d, err := manDate(date, f.getenv)
				if err != nil {
					return err
				}
				opts.ManDate = d
			}
			opts.Root = cmd.Root()
			opts.ConfigPath = f.defaultConfigPath()
			if runF != nil {
				return runF(opts)
			}
			return genRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Dir, "dir", "", "directory to write completions/ and man/ into")
	fl.BoolVar(&opts.Man, "man", true, "write man pages too")
	fl.StringVar(&date, "man-date", "", "date in the man pages' header: YYYY-MM-DD or RFC 3339 (default: SOURCE_DATE_EPOCH)")
	fl.StringVar(&opts.ManVersion, "man-version", f.Version.Version, "version named in the man pages' header")
	fl.BoolVar(&opts.ManGzip, "man-gzip", false, "write man pages gzip-compressed (.1.gz), as packages install them")
	_ = cmd.MarkFlagDirname("dir")
	return cmd
}

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

func genRun(opts *GenOptions) error {
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

// manPages renders one page per visible command and help topic (exit-codes), by file name.
func manPages(opts *GenOptions) (map[string][]byte, error) {
	cfgPath := opts.ConfigPath
	portable := func(s string) string {
		if cfgPath == "" {
			return s
		}
		return strings.ReplaceAll(s, cfgPath, portableConfigPath)
	}
	pages := map[string][]byte{}
	edited := map[*pflag.Flag]bool{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		// gen owns the process: it edits the tree's texts for the man renderer, which
		// reads them as markdown.
		c.DisableAutoGenTag = true
		c.Short, c.Long, c.Example = mdEscape(portable(c.Short)), manMarkdown(portable(c.Long)), portable(c.Example)
		for _, fs := range []*pflag.FlagSet{c.PersistentFlags(), c.Flags()} {
			fs.VisitAll(func(fl *pflag.Flag) {
				if !edited[fl] { // a persistent flag is met once per command
					edited[fl] = true
					fl.Usage, fl.DefValue = mdEscape(portable(fl.Usage)), portable(fl.DefValue)
				}
			})
		}
		header := &doc.GenManHeader{
			Section: "1",
			Date:    &opts.ManDate,
			Source:  "bucketctl " + opts.ManVersion,
			Manual:  "bucketctl manual",
		}
		var buf bytes.Buffer
		if err := doc.GenMan(c, header, &buf); err != nil {
			return fmt.Errorf("man page of %s: %w", c.CommandPath(), err)
		}
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		page := buf.Bytes()
		if opts.ManGzip {
			name, page = name+".gz", gzipBytes(page)
		}
		pages[name] = page
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || (sub.IsAdditionalHelpTopicCommand() && !sub.Hidden) {
				if err := walk(sub); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return pages, walk(opts.Root)
}

// manMarkdown turns help text into the markdown the man renderer reads: a block of lines
// (between blank lines) with an indented line is a table or a command, kept as it is
// (no-fill); other blocks are prose, reflowed, with markdown's characters escaped.
func manMarkdown(s string) string {
	blocks := strings.Split(s, "\n\n")
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		indented := false
		for _, l := range lines {
			indented = indented || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
		}
		switch {
		case indented:
			blocks[i] = "```\n" + strings.Trim(b, "\n") + "\n```"
		case len(lines) == 1 && strings.HasPrefix(b, "#"): // a heading
		default:
			blocks[i] = mdEscape(b)
		}
	}
	return strings.Join(blocks, "\n\n")
}

// mdEscape escapes the characters markdown would read as emphasis, links, HTML or code.
var mdEscape = strings.NewReplacer(`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`, `<`, `\<`, `>`, `\>`).Replace

// gzipBytes compresses b reproducibly: no file name and no time in the gzip header.
func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression) // a valid level: no error
	_, _ = zw.Write(b)                                       // writes to memory cannot fail
	_ = zw.Close()
	return buf.Bytes()
}

// writeManPages writes pages into dir and removes bucketctl man pages it did not write
// (those of commands that no longer exist); it touches no other file.
func writeManPages(dir string, pages map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "bucketctl*.1*"))
	if err != nil {
		return err
	}
	for _, p := range old {
		base := filepath.Base(p)
		if _, keep := pages[base]; !keep && (strings.HasSuffix(base, ".1") || strings.HasSuffix(base, ".1.gz")) {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	for name, page := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), page, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// NewCmdCompletion is cobra's default completion command (bash, zsh, fish and powershell
// subcommands whose help says how to install each, and --no-descriptions) with examples.
// It writes the same scripts as the committed completions/.
func NewCmdCompletion(f *Factory) *cobra.Command {
	// Let cobra build its default command on a stand-in root, then adopt it: the
	// subcommands generate for whichever root they end up under (cmd.Root()).
	standIn := &cobra.Command{Use: "bucketctl"}
	standIn.SetOut(f.IO.Out)
	standIn.AddCommand(&cobra.Command{Use: "stand-in", Run: func(*cobra.Command, []string) {}})
	standIn.InitDefaultCompletionCmd()
	var comp *cobra.Command
	for _, c := range standIn.Commands() {
		if c.Name() == "completion" {
			comp = c
		}
	}
	if comp == nil {
		panic("gen: cobra made no completion command to copy") // a cobra upgrade changed it: a build-time tool, so fail loudly
	}
	standIn.RemoveCommand(comp)
	comp.Example = `  # bash (needs the bash-completion package): this shell, then every new one
  source <(bucketctl completion bash)
  mkdir -p ~/.local/share/bash-completion/completions
  bucketctl completion bash > ~/.local/share/bash-completion/completions/bucketctl

  # zsh (with compinit), fish, PowerShell
  bucketctl completion zsh > "${fpath[1]}/_bucketctl"
  bucketctl completion fish > ~/.config/fish/completions/bucketctl.fish
  bucketctl completion powershell | Out-String | Invoke-Expression`
	return comp
}
