package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// manPages renders one page per visible command and help topic (exit-codes), by file name.
func manPages(opts *Options) (map[string][]byte, error) {
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
