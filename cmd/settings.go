package cmd

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Settings reads the root's persistent flags: a flag given on the command line wins, then
// its environment variable BUCKETCTL_<FLAG> (dashes as underscores, e.g.
// BUCKETCTL_DIAL_TIMEOUT), then the flag's default. (The config file holds contexts, not
// flags.) It does for bucketctl what viper's BindPFlags and AutomaticEnv did, without
// viper's dependencies in every start-up of the binary.
type Settings struct {
	flags  *pflag.FlagSet
	getenv func(string) string
}

// BindPFlags makes fs the flags read.
func (s *Settings) BindPFlags(fs *pflag.FlagSet) error {
	s.flags = fs
	return nil
}

// lookup returns key's flag (nil if there is none) and, when the flag was not given, the
// value of its environment variable ("" if unset).
func (s *Settings) lookup(key string) (*pflag.Flag, string) {
	var fl *pflag.Flag
	if s.flags != nil {
		fl = s.flags.Lookup(key)
	}
	if fl != nil && fl.Changed {
		return fl, ""
	}
	return fl, s.getenv(envName(key))
}

// GetString returns key's value.
func (s *Settings) GetString(key string) string {
	fl, env := s.lookup(key)
	switch {
	case env != "":
		return env
	case fl != nil:
		return fl.Value.String()
	}
	return ""
}

// GetBool returns key's value; an unparsable environment value reads as false (Validate
// reports it).
func (s *Settings) GetBool(key string) bool {
	fl, env := s.lookup(key)
	if env != "" {
		b, _ := strconv.ParseBool(env)
		return b
	}
	return fl != nil && fl.Value.String() == "true"
}

// GetDuration returns key's value; an unparsable environment value reads as 0 (Validate
// reports it).
func (s *Settings) GetDuration(key string) time.Duration {
	fl, env := s.lookup(key)
	if env != "" {
		d, _ := time.ParseDuration(env)
		return d
	}
	if fl == nil {
		return 0
	}
	d, _ := time.ParseDuration(fl.Value.String())
	return d
}

// GetStringSlice returns key's values; the environment variable separates them with
// commas or spaces.
func (s *Settings) GetStringSlice(key string) []string {
	fl, env := s.lookup(key)
	switch {
	case env != "":
		return splitList(strings.Fields(env))
	case fl != nil:
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			return sv.GetSlice()
		}
		return splitList([]string{fl.Value.String()})
	}
	return nil
}

// Validate checks the environment variables of typed flags, as flag parsing checks flags.
func (s *Settings) Validate() error {
	if s.flags == nil {
		return nil
	}
	var err error
	s.flags.VisitAll(func(fl *pflag.Flag) {
		_, env := s.lookup(fl.Name)
		if env == "" || err != nil {
			return
		}
		switch fl.Value.Type() {
		case "bool":
			if _, perr := strconv.ParseBool(env); perr != nil {
				err = usagef("%s=%q: want true or false", envName(fl.Name), env)
			}
		case "duration":
			if _, perr := time.ParseDuration(env); perr != nil {
				err = usagef("%s=%q: want a duration such as 500ms or 5s", envName(fl.Name), env)
			}
		}
	})
	return err
}
