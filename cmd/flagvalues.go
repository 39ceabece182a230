package cmd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/bucketctl/bucketctl/bucket/units"
	"github.com/bucketctl/bucketctl/tui/format"
)

// Flag values read by bucket's parsers, so every flag takes numbers as the views print
// them (5/s, 300/m, 1,500, 3s) and refuses others in the user's words.

// rateValue is a rate in tokens per second: 5, 5/s, 300/m, 0.5/h.
type rateValue struct{ p *float64 }

func (v rateValue) Set(s string) (err error) { *v.p, err = units.ParseRate(s); return err }
func (v rateValue) Type() string             { return "rate" }
func (v rateValue) String() string {
	if *v.p == 0 {
		return "0"
	}
	return format.Exact(*v.p) + "/s"
}

// amountValue is a number of tokens or requests: 10, 2.5, 1,000, 1e6.
type amountValue struct{ p *float64 }

func (v amountValue) Set(s string) (err error) { *v.p, err = units.ParseAmount(s); return err }
func (v amountValue) Type() string             { return "number" }
func (v amountValue) String() string           { return format.Exact(*v.p) }

// intValue and int64Value are whole numbers written as amounts are (10, 1,000, 10k),
// never read in another base (0100, 0x10) or with padding.
type intValue struct{ p *int }

func (v intValue) Set(s string) error {
	n, err := units.ParseWhole(s)
	if err == nil && int64(int(n)) != n {
		err = errors.New("too large; write it as " + units.WholeExample)
	}
	if err == nil {
		*v.p = int(n)
	}
	return err
}
func (v intValue) Type() string   { return "int" }
func (v intValue) String() string { return strconv.Itoa(*v.p) }

type int64Value struct{ p *int64 }

func (v int64Value) Set(s string) (err error) {
	n, err := units.ParseWhole(s)
	if err == nil {
		*v.p = n
	}
	return err
}
func (v int64Value) Type() string   { return "int64" }
func (v int64Value) String() string { return strconv.FormatInt(*v.p, 10) }

// durationValue is a duration with its unit: 3s, 500ms, 1m30s (a bare 0 is 0).
type durationValue struct{ p *time.Duration }

func (v durationValue) Set(s string) (err error) { *v.p, err = units.ParseDuration(s, 0); return err }
func (v durationValue) Type() string             { return "duration" }
func (v durationValue) String() string {
	if *v.p == 0 {
		return "0"
	}
	return v.p.String()
}

// formatValue is -o: one of its command's output formats, refused as the flag is parsed
// otherwise, so a command names its formats once.
type formatValue struct {
	p       *string
	formats []string
}

func (v formatValue) Set(s string) error {
	if !slices.Contains(v.formats, s) {
		return fmt.Errorf("must be one of %s", strings.Join(v.formats, ", "))
	}
	*v.p = s
	return nil
}
func (v formatValue) Type() string   { return "format" }
func (v formatValue) String() string { return *v.p }

func rateVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(rateValue{p}, name, usage)
}

func amountVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(amountValue{p}, name, usage)
}

func intVarP(fs *pflag.FlagSet, p *int, name, short string, def int, usage string) {
	*p = def
	fs.VarP(intValue{p}, name, short, usage)
}

func intVar(fs *pflag.FlagSet, p *int, name string, def int, usage string) {
	intVarP(fs, p, name, "", def, usage)
}

func int64VarP(fs *pflag.FlagSet, p *int64, name, short string, def int64, usage string) {
	*p = def
	fs.VarP(int64Value{p}, name, short, usage)
}

func durationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(durationValue{p}, name, short, usage)
}

// durationFlag defines a duration flag without a variable, read back from the flag set.
func durationFlag(fs *pflag.FlagSet, name string, def time.Duration, usage string) {
	p := new(time.Duration)
	durationVarP(fs, p, name, "", def, usage)
}

// invalidValue is the one line for a flag value that does not parse: the flag, the value,
// and what a valid one looks like; nothing of Go's parsers.
func invalidValue(err error) (string, bool) {
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) || ive.GetFlag() == nil {
		return "", false
	}
	fl := ive.GetFlag()
	return fmt.Sprintf("--%s %q: %s", fl.Name, ive.GetValue(), valueProblem(fl, errors.Unwrap(ive))), true
}

// valueProblem says what is wrong with a value fl refused with err, and how to write one.
func valueProblem(fl *pflag.Flag, err error) string {
	switch fl.Value.(type) {
	case intValue, int64Value:
		return err.Error() // units.ParseWhole speaks the user's words
	}
	switch fl.Value.Type() {
	case "rate", "number", "duration", "format":
		return err.Error() // bucket's parsers, and formatValue, speak the user's words
	case "int", "int64", "int32", "uint", "uint64":
		return "not a whole number; write it as 10"
	case "float64":
		return "not a number; write it as " + units.AmountExample
	case "bool":
		return "write true or false (or just --" + fl.Name + ")"
	}
	return "not a valid " + fl.Value.Type()
}

// The bounds of numeric flags, checked in RunE, worded once: "--page-size 0: must be at
// least 1", "--limit -1: must be >= 0 (0 = no limit)".

// atLeast is the usage error of a flag below its least value; nil when v is in bounds.
func atLeast[T int | time.Duration](flag string, v, least T) error {
	if v >= least {
		return nil
	}
	return usagef("%s %v: must be at least %v", flag, v, least)
}

// notNegative is the usage error of a negative flag whose 0 means zero ("no limit").
func notNegative[T int | time.Duration](flag string, v T, zero string) error {
	if v >= 0 {
		return nil
	}
	return usagef("%s %v: must be >= 0 (0 = %s)", flag, v, zero)
}

// firstErr is the first of errs that is not nil: flag checks in the order they are listed.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
