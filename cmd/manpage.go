package cmd

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// manHeader is what a man page's .TH line says besides its title.
type manHeader struct {
	Section string
	Date    time.Time
	Source  string
	Manual  string
}

// manPage renders c's help as a roff man page: NAME, SYNOPSIS, DESCRIPTION, OPTIONS,
// EXAMPLE and SEE ALSO. Written here rather than through cobra/doc, whose markdown
// renderer would be linked into every start-up of the binary for a hidden command.
// portable rewrites machine-specific text (the config path).
func manPage(c *cobra.Command, h manHeader, portable func(string) string) []byte {
	c.InitDefaultHelpFlag()
	var b bytes.Buffer
	dash := strings.ReplaceAll(c.CommandPath(), " ", "-")
	fmt.Fprintf(&b, ".nh\n.TH \"%s\" \"%s\" \"%s\" \"%s\" \"%s\"\n\n", strings.ToUpper(dash), h.Section,
		h.Date.Format("Jan 2006"), h.Source, h.Manual)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n\n", dash, roffText(portable(c.Short)))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n\n", roffText(c.UseLine()))
	desc := c.Long
	if desc == "" {
		desc = c.Short
	}
	fmt.Fprintf(&b, ".SH DESCRIPTION\n%s\n", roffBlocks(portable(desc)))
	if fs := c.NonInheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS\n")
		manFlags(&b, fs, portable)
	}
	if fs := c.InheritedFlags(); fs.HasAvailableFlags() {
		b.WriteString(".SH OPTIONS INHERITED FROM PARENT COMMANDS\n")
		manFlags(&b, fs, portable)
	}
	if c.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLE\n.EX\n%s\n.EE\n\n", roffLines(portable(c.Example)))
	}
	var also []string
	if c.HasParent() {
		also = append(also, fmt.Sprintf("\\fB%s(%s)\\fP", strings.ReplaceAll(c.Parent().CommandPath(), " ", "-"), h.Section))
	}
	children := c.Commands()
	sort.Slice(children, func(i, j int) bool { return children[i].Name() < children[j].Name() })
	for _, sub := range children {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			also = append(also, fmt.Sprintf("\\fB%s-%s(%s)\\fP", dash, sub.Name(), h.Section))
		}
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, ".SH SEE ALSO\n%s\n", strings.Join(also, ", "))
	}
	return b.Bytes()
}

func manFlags(b *bytes.Buffer, fs *pflag.FlagSet, portable func(string) string) {
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Hidden || fl.Deprecated != "" {
			return
		}
		b.WriteString(".PP\n")
		if fl.Shorthand != "" && fl.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB-%s\\fP, ", fl.Shorthand)
		}
		def := portable(fl.DefValue)
		if fl.Value.Type() == "string" {
			def = fmt.Sprintf("%q", def)
		}
		fmt.Fprintf(b, "\\fB--%s\\fP=%s\n.RS\n%s\n.RE\n\n", fl.Name, roffText(def), roffText(portable(fl.Usage)))
	})
}

// roffBlocks renders help text: a block (between blank lines) with an indented line is a
// table or a command, kept as it is (.EX); other blocks are paragraphs, filled by the
// formatter.
func roffBlocks(s string) string {
	var out []string
	for _, block := range strings.Split(strings.TrimSpace(s), "\n\n") {
		indented := false
		for _, l := range strings.Split(block, "\n") {
			indented = indented || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
		}
		if indented {
			out = append(out, ".PP\n.EX\n"+roffLines(strings.Trim(block, "\n"))+"\n.EE")
		} else {
			out = append(out, ".PP\n"+roffLines(block))
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// roffLines escapes text line by line: backslashes, and a leading dot or apostrophe that roff
// would read as a request.
func roffLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = roffText(l)
		if strings.HasPrefix(lines[i], ".") || strings.HasPrefix(lines[i], "'") {
			lines[i] = `\&` + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

func roffText(s string) string { return strings.ReplaceAll(s, `\`, `\e`) }
