package cmd

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/cmd/connect"
)

// argsError is a usage error of too many arguments, which Run may give a splitHint.
type argsError struct {
	usage error
	cmd   *cobra.Command
	args  []string
}

func (e *argsError) Error() string { return e.usage.Error() }
func (e *argsError) Unwrap() error { return e.usage }

func tooManyArgs(cmd *cobra.Command, args []string, format string, a ...any) error {
	return &argsError{usage: usagef(format, a...), cmd: cmd, args: args}
}

// withSplitHint names the flag whose value looks split by the shell (--rate 5 per second).
func withSplitHint(err error, raw []string) error {
	var ae *argsError
	if !errors.As(err, &ae) {
		return err
	}
	if hint := splitHint(ae.cmd, raw, ae.args); hint != "" {
		msg := strings.TrimSuffix(ae.usage.Error(), fmt.Sprintf(" (see '%s --help')", ae.cmd.CommandPath()))
		return usagef("%s: %s", msg, hint)
	}
	return err
}

func splitHint(cmd *cobra.Command, raw, args []string) string {
	for i := 0; i < len(raw); i++ {
		w := raw[i]
		if w == "--" {
			return ""
		}
		name, value, inline := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") || len(w) < 2 {
			continue
		}
		fl := cmd.Flag(name)
		if fl == nil && !strings.HasPrefix(w, "--") && len(name) == 1 {
			fl = cmd.Flags().ShorthandLookup(name)
		}
		if fl == nil || fl.NoOptDefVal != "" || fl.Value.Type() == "format" {
			continue // no value, or one word of a fixed few
		}
		next := i + 1
		if !inline {
			if next >= len(raw) {
				return ""
			}
			value, next = raw[next], next+1
		}
		var extra []string
		for _, x := range raw[next:] {
			if strings.HasPrefix(x, "-") || !slices.Contains(args, x) {
				break
			}
			extra = append(extra, x)
		}
		if len(extra) > 0 && argsFit(cmd, args, extra) {
			words := append([]string{value}, extra...)
			return fmt.Sprintf("the value of --%s looks split by the shell into %d words (%s): quote it, --%s %s",
				fl.Name, len(words), safe(strings.Join(words, " ")), fl.Name, shellWord(strings.Join(words, " ")))
		}
		i = next - 1
	}
	return ""
}

// argsFit says whether the arguments without extra are what cmd takes: only then were the
// extra words a split value and not more arguments (consume --cost 2 k1 k2).
func argsFit(cmd *cobra.Command, args, extra []string) bool {
	rest := slices.Clone(args)
	for _, x := range extra {
		if i := slices.Index(rest, x); i >= 0 {
			rest = slices.Delete(rest, i, i+1)
		}
	}
	return cmd.Args == nil || cmd.Args(cmd, rest) == nil
}

// cobraUsage turns a usage error of cobra's into one line of ours.
func cobraUsage(root *cobra.Command, err error) error {
	var ue *UsageError
	if errors.As(err, &ue) || !slices.ContainsFunc([]string{"unknown command", "unknown flag", "unknown shorthand", "accepts ",
		"requires at least", "invalid argument"}, func(p string) bool { return strings.HasPrefix(err.Error(), p) }) {
		return err
	}
	unknownCommandRe := regexp.MustCompile(`^unknown command "(.*?)" for "(.*?)"`)
	if m := unknownCommandRe.FindStringSubmatch(err.Error()); m != nil {
		c := root
		if found, _, ferr := root.Find(strings.Fields(m[2])[1:]); ferr == nil {
			c = found
		}
		return unknownCommand(c, m[1])
	}
	return &UsageError{Err: fmt.Errorf("%v (see 'bucketctl --help')", err)}
}

// flagError is the usage error for a bad flag, with the nearest name for an unknown one.
func flagError(c *cobra.Command, err error) error {
	if line, ok := invalidValue(err); ok {
		return usagef("%s", line)
	}
	if name, ok := strings.CutPrefix(err.Error(), "unknown flag: --"); ok {
		var names []string
		c.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
		c.InheritedFlags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
		if s := closestFlag(name, names); s != "" {
			if fl := c.Root().PersistentFlags().Lookup(s); fl != nil {
				return usagef("unknown flag --%s: did you mean --%s? (a global flag: 'bucketctl --help' lists them)", name, s)
			}
			return usagef("unknown flag --%s for '%s': did you mean --%s?", name, c.CommandPath(), s)
		}
	}
	return usagef("%v (see '%s --help')", err, c.CommandPath())
}

// closestFlag is the flag name nearest to name (connect.Closest), or one that differs from
// it by two neighbouring letters swapped (--ulr for --url).
func closestFlag(name string, names []string) string {
	if s := connect.Closest(name, names); s != "" {
		return s
	}
	for _, n := range names {
		if len(n) != len(name) || n == name {
			continue
		}
		for i := 0; i+1 < len(n); i++ {
			if n[:i]+n[i+1:i+2]+n[i:i+1]+n[i+2:] == name {
				return n
			}
		}
	}
	return ""
}

func unknownCommand(c *cobra.Command, word string) error {
	of := ""
	if c.HasParent() {
		of = " of '" + c.CommandPath() + "'"
	}
	if s := c.SuggestionsFor(word); len(s) > 0 {
		return usagef("unknown command %q%s: did you mean %q?", word, of, s[0])
	}
	return usagef("unknown command %q%s (see '%s --help')", word, of, c.CommandPath())
}

// helpOrUnknown is the RunE of a group (script, config).
func helpOrUnknown(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	return unknownCommand(cmd, args[0])
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return tooManyArgs(cmd, args, "%s takes no arguments, got %q (see '%s --help')", cmd.Name(), args[0], cmd.CommandPath())
	}
	return nil
}

func exactKey(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return tooManyArgs(cmd, args, "%s needs exactly one KEY, got %d (see '%s --help')", cmd.Name(), len(args), cmd.CommandPath())
	}
	if args[0] == "" {
		return usagef("KEY is empty")
	}
	return nil
}
