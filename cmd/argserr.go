package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// argsError is a usage error of too many arguments; Run adds what the command line shows
// of a flag value the shell split into words (see splitHint).
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

// withSplitHint replaces the line of too many arguments by one that names the flag whose
// value looks split by the shell (--rate 5 per second, unquoted), when raw shows one.
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

// splitHint finds a flag in raw whose value is followed by words the command took as
// arguments: the shell split a value with spaces. It says so and how to quote it.
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
