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

// value is a flag value read by one of units' parsers, so every flag takes numbers as the
// views print them (5/s, 300/m, 1,500, 3s) and refuses others in the user's words.
type value[T any] struct {
	p     *T
	typ   string
	parse func(string) (T, error)
	show  func(T) string
}

func (v value[T]) Set(s string) error {
	x, err := v.parse(s)
	if err == nil {
		*v.p = x
	}
	return err
}
func (v value[T]) Type() string   { return v.typ }
func (v value[T]) String() string { return v.show(*v.p) }

// rateVar defines a rate in tokens per second: 5, 5/s, 300/m, 0.5/h.
func rateVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(value[float64]{p, "rate", units.ParseRate, func(r float64) string {
		if r == 0 {
			return "0"
		}
		return format.Exact(r) + "/s"
	}}, name, usage)
}

// amountVar defines a number of tokens or requests: 10, 2.5, 1,000, 1e6.
func amountVar(fs *pflag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(value[float64]{p, "number", units.ParseAmount, format.Exact}, name, usage)
}

// intVarP and int64VarP define whole numbers written as amounts are (10, 1,000, 10k).
func intVarP(fs *pflag.FlagSet, p *int, name, short string, def int, usage string) {
	*p = def
	fs.VarP(value[int]{p, "int", func(s string) (int, error) {
		n, err := units.ParseWhole(s)
		if err == nil && int64(int(n)) != n {
			err = errors.New("too large; write it as " + units.WholeExample)
		}
		return int(n), err
	}, strconv.Itoa}, name, short, usage)
}

func intVar(fs *pflag.FlagSet, p *int, name string, def int, usage string) {
	intVarP(fs, p, name, "", def, usage)
}

func int64VarP(fs *pflag.FlagSet, p *int64, name, short string, def int64, usage string) {
	*p = def
	fs.VarP(value[int64]{p, "int64", units.ParseWhole, func(n int64) string { return strconv.FormatInt(n, 10) }}, name, short, usage)
}

// durationVarP defines a duration with its unit: 3s, 500ms, 1m30s (a bare 0 is 0).
func durationVarP(fs *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	fs.VarP(value[time.Duration]{p, "duration", func(s string) (time.Duration, error) { return units.ParseDuration(s, 0) },
		func(d time.Duration) string {
			if d == 0 {
				return "0"
			}
			return d.String()
		}}, name, short, usage)
}

// durationFlag defines a duration flag without a variable, read back from the flag set.
func durationFlag(fs *pflag.FlagSet, name string, def time.Duration, usage string) {
	durationVarP(fs, new(time.Duration), name, "", def, usage)
}

// oneOf is a flag value that is one of values (-o, --sort-by), refused as it is parsed.
func oneOf(p *string, values []string) pflag.Value {
	return value[string]{p, "format", func(s string) (string, error) {
		if !slices.Contains(values, s) {
			return "", fmt.Errorf("must be one of %s", strings.Join(values, ", "))
		}
		return s, nil
	}, func(s string) string { return s }}
}

// invalidValue is the one line for a flag value that does not parse, in the user's words.
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
	case value[float64], value[int], value[int64], value[time.Duration], value[string]:
		return err.Error() // units' parsers speak the user's words
	}
	switch fl.Value.Type() {
	case "duration":
		return err.Error()
	case "int", "int64", "int32", "uint", "uint64":
		return "not a whole number; write it as 10"
	case "float64":
		return "not a number; write it as " + units.AmountExample
	case "bool":
		return "write true or false (or just --" + fl.Name + ")"
	}
	return "not a valid " + fl.Value.Type()
}

// atLeast is the usage error of a flag below its least value, or nil.
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

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
