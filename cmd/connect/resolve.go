package connect

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// DefaultURL is the server when neither a flag, a variable nor a context names one.
const DefaultURL = "redis://127.0.0.1:6379"

// AddFlags defines the connection flags Resolve reads; duration defines the durations (nil: pflag's).
func AddFlags(pf *pflag.FlagSet, configPath string, duration func(fs *pflag.FlagSet, name string, def time.Duration, usage string)) {
	if duration == nil {
		duration = func(fs *pflag.FlagSet, name string, def time.Duration, usage string) { fs.Duration(name, def, usage) }
	}
	pf.String("url", DefaultURL, "Redis URL: host:port, redis://[user@]host:port[/db], rediss:// for TLS, unix:///path.sock (no password: see REDISCLI_AUTH)")
	pf.StringSlice("cluster", nil, "Redis Cluster seed addresses host:port[,host:port] (instead of --url)")
	pf.String("sentinel-master", "", "Sentinel master name (with --sentinel-addrs)")
	pf.StringSlice("sentinel-addrs", nil, "Sentinel addresses host:port[,host:port]")
	pf.String("sentinel-user", "", "user for the sentinels themselves, if they need AUTH (password from BUCKETCTL_SENTINEL_PASSWORD)")
	pf.String("user", "", "ACL user name (password from REDISCLI_AUTH or BUCKETCTL_PASSWORD)")
	pf.String("tls-ca", "", "CA certificate file (PEM) to verify the server")
	pf.String("tls-cert", "", "client certificate file (PEM) for mutual TLS")
	pf.String("tls-key", "", "client key file (PEM) for mutual TLS")
	pf.Bool("insecure-skip-verify", false, "INSECURE: do not verify the server's TLS certificate")
	duration(pf, "dial-timeout", 5*time.Second, "time allowed for the TCP (and TLS) connection")
	duration(pf, "timeout", 3*time.Second, "longest wait for Redis: each request, the connection's handshake included; "+
		"a one-key command (inspect, check, consume, reset KEY) ends within it (never retried)")
	pf.String("context", "", "named context from the config file (typed, it wins over BUCKETCTL_URL and the other variables)")
	pf.String("config", "", "config file (default "+configPath+")")
}

type resolver struct {
	flags     *pflag.FlagSet
	lookupEnv func(string) (string, bool)
	ctx       ContextConfig
	ctxName   string
	ctxTyped  bool // a typed --context wins over the variables
}

// Resolve chooses the one Server: flags (already bound by BindEnv), then BUCKETCTL_*
// variables, then the config file's context, then the defaults ('help environment').
func Resolve(flags *pflag.FlagSet, lookupEnv func(string) (string, bool), cfg *Config) (*Server, error) {
	r := &resolver{flags: flags, lookupEnv: lookupEnv}
	name := r.env("context") // set to "": the file's current-context, as when unset
	if r.typed("context") {
		name, r.ctxTyped = flags.Lookup("context").Value.String(), true
	}
	cc, name, err := cfg.ContextFor(name)
	if err != nil {
		return nil, err
	}
	r.ctx, r.ctxName = cc, name
	s := &Server{
		User:    r.str("user", cc.User),
		TLSCA:   r.str("tls-ca", cc.TLSCA),
		TLSCert: r.str("tls-cert", cc.TLSCert),
		TLSKey:  r.str("tls-key", cc.TLSKey),
	}
	s.DialTimeout, _ = flags.GetDuration("dial-timeout")
	s.Timeout, _ = flags.GetDuration("timeout")
	insecure, _ := flags.GetBool("insecure-skip-verify")
	s.InsecureSkipVerify = insecure || cc.InsecureSkipVerify
	switch {
	case insecure && r.typed("insecure-skip-verify"):
		s.InsecureSource = "--insecure-skip-verify"
	case insecure:
		s.InsecureSource = EnvName("insecure-skip-verify")
	case cc.InsecureSkipVerify:
		s.InsecureSource = fmt.Sprintf("context %q's insecure-skip-verify", name)
	}
	for _, step := range []func(*Server) error{r.server, r.passwords, r.check} {
		if err := step(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// server sets the one server s talks to, from the first level that names one.
func (r *resolver) server(s *Server) error {
	chosen := -1
	for _, level := range []func(key string) (string, error){r.flagLevel, r.envLevel} {
		var given []string
		for i, form := range serverForms {
			for _, k := range form[:min(2, len(form))] {
				g, err := level(k)
				if err != nil {
					return err
				}
				if g != "" {
					given, chosen = append(given, g), i
					break
				}
			}
		}
		if len(given) > 1 {
			return Usagef("%s and %s both name the server: %s", given[0], given[1], oneServer)
		}
		if chosen >= 0 {
			break
		}
	}
	cc := r.ctx
	if chosen < 0 {
		named := 0
		for i, set := range []bool{cc.URL != "", len(cc.Cluster) > 0, cc.SentinelMaster != "" || len(cc.SentinelAddrs) > 0} {
			if set {
				named, chosen = named+1, i
			}
		}
		switch {
		case named > 1:
			return Usagef("context %q names more than one server (url, cluster, sentinel-master): keep one in the config file", r.ctxName)
		case named == 0 && r.ctxName != "":
			what := "names no server"
			if len(cc.empty) > 0 {
				what = "has an empty " + strings.Join(cc.empty, " and ")
			}
			return Usagef("context %q %s: set one with 'bucketctl config set-context %s --url host:port' (or --cluster, --sentinel-master), or pass --url",
				r.ctxName, what, r.ctxName)
		}
		s.Context = r.ctxName
	}
	str := func(key, fromCtx string) string {
		if s.Context != "" {
			return fromCtx
		}
		return r.flags.Lookup(key).Value.String()
	}
	// A list's user info is the data nodes' user and password, unless --user or a password
	// variable gives them; a typed password is refused.
	addrs := func(key string, fromCtx []string, dst *[]string) error {
		if s.Context == "" {
			fromCtx, _ = r.flags.GetStringSlice(key)
		}
		l, err := parseAddrs(fromCtx)
		if err != nil {
			return Usagef("%s %s", r.source(key), err)
		}
		*dst = l.addrs
		if r.typed(key) {
			if err := TypedListPassword(key, fromCtx, PasswordHome); err != nil {
				return err
			}
		}
		s.User = cmp.Or(s.User, l.user)
		if l.hasPassword {
			s.password = l.password
		}
		return nil
	}
	switch chosen {
	case 0:
		s.URL = NormalizeURL(str("url", cc.URL))
	case 1:
		return addrs("cluster", cc.Cluster, &s.Cluster)
	case 2:
		if s.SentinelMaster = str("sentinel-master", cc.SentinelMaster); s.SentinelMaster != "" {
			s.SentinelUser = r.str("sentinel-user", cc.SentinelUser)
		}
		return addrs("sentinel-addrs", cc.SentinelAddrs, &s.SentinelAddrs)
	default:
		s.URL = DefaultURL
	}
	return nil
}

func (r *resolver) flagLevel(key string) (string, error) {
	if r.typed(key) {
		return "--" + key, nil
	}
	return "", nil
}

// envLevel names key's variable when set and no typed --context overrides it (empty: an error).
func (r *resolver) envLevel(key string) (string, error) {
	v, set := r.lookupEnv(EnvName(key))
	if r.ctxTyped || !set {
		return "", nil
	}
	if strings.TrimSpace(v) == "" {
		return "", Usagef("%s is set but empty: name a server in it, or unset it", EnvName(key))
	}
	return EnvName(key), nil
}

func (r *resolver) typed(key string) bool {
	fl := r.flags.Lookup(key)
	return fl != nil && fl.Changed
}

func (r *resolver) env(key string) string {
	v, _ := r.lookupEnv(EnvName(key))
	return v
}

// str is key's value: typed flag, typed --context, variable, context, flag default.
func (r *resolver) str(key, fromCtx string) string {
	switch {
	case r.typed(key):
	case r.ctxTyped && fromCtx != "":
		return fromCtx
	case r.env(key) != "":
	case fromCtx != "":
		return fromCtx
	}
	return r.flags.Lookup(key).Value.String()
}

func (r *resolver) source(key string) string {
	switch {
	case r.typed(key):
		return "--" + key
	case !r.ctxTyped && r.env(key) != "":
		return EnvName(key)
	case r.ctxName != "":
		return fmt.Sprintf("context %q's %s", r.ctxName, key)
	}
	return "--" + key
}

// passwords are never from argv: the variables, else the context's (a typed --context first).
func (r *resolver) passwords(s *Server) error {
	cc := r.ctx
	pick := func(dst *string, vars []string, field, envName, literal string) error {
		if !r.ctxTyped || envName == "" && literal == "" {
			for _, k := range vars {
				if v, _ := r.lookupEnv(k); v != "" {
					*dst = v
					return nil
				}
			}
		}
		if envName == "" {
			if literal != "" {
				*dst = literal
			}
			return nil
		}
		v, _ := r.lookupEnv(envName)
		if v == "" {
			return Usagef("context %q: %s names the environment variable %s, which is not set (export it, or remove %s)", r.ctxName, field, envName, field)
		}
		*dst = v
		return nil
	}
	err := pick(&s.password, []string{"BUCKETCTL_PASSWORD", "REDISCLI_AUTH"}, "password-env", cc.PasswordEnv, cc.Password)
	if err != nil || s.SentinelMaster == "" {
		return err
	}
	return pick(&s.sentinelPassword, []string{"BUCKETCTL_SENTINEL_PASSWORD"}, "sentinel-password-env", cc.SentinelPasswordEnv, "")
}

// check refuses what cannot work, before anything is dialled.
func (r *resolver) check(s *Server) error {
	// go-redis sends no AUTH without a password: a user alone would silently be the default.
	user, hasPassword := s.User, s.password != ""
	if s.URL != "" {
		if r.typed("url") {
			if err := TypedPassword("url", s.URL, PasswordHome); err != nil {
				return err
			}
		}
		u, err := parseURL(s.URL)
		if err != nil {
			return Usagef("%s %s: %s (%s)", r.source("url"), RedactValue(s.URL), err, urlHelp)
		}
		if user == "" {
			user = u.user
		}
		hasPassword = hasPassword || u.hasPassword && u.password != ""
	}
	if s.SentinelMaster != "" && len(s.SentinelAddrs) == 0 {
		return Usagef("--sentinel-master %q needs --sentinel-addrs host:port[,host:port]", s.SentinelMaster)
	}
	if s.SentinelMaster == "" && len(s.SentinelAddrs) > 0 {
		return Usagef("--sentinel-addrs needs --sentinel-master NAME (the name the sentinels monitor, as in SENTINEL MASTERS)")
	}
	if user != "" && !hasPassword {
		if s.User == "" {
			// Not quoted: redis-cli reads redis://NAME@host's NAME as a password.
			return Usagef("%s has user info but no password: set REDISCLI_AUTH or BUCKETCTL_PASSWORD (any value for a nopass user); "+
				"without one Redis would run the commands as the default user", r.source("url"))
		}
		return Usagef("%s %q has no password: set REDISCLI_AUTH or BUCKETCTL_PASSWORD (any value for a nopass user), "+
			"or the context's password-env; without one Redis would run the commands as the default user", r.source("user"), s.User)
	}
	if s.SentinelUser != "" && s.sentinelPassword == "" {
		return Usagef("%s %q has no password: set BUCKETCTL_SENTINEL_PASSWORD, or the context's sentinel-password-env", r.source("sentinel-user"), s.SentinelUser)
	}
	for _, key := range []string{"dial-timeout", "timeout"} {
		if d, _ := r.flags.GetDuration(key); d <= 0 {
			return Usagef("%s %v: must be above 0 (e.g. 2s)", r.source(key), d)
		}
	}
	if (s.TLSCert == "") != (s.TLSKey == "") {
		return Usagef("--tls-cert and --tls-key go together")
	}
	return nil
}

// EnvName is the variable of a flag: BUCKETCTL_<FLAG>, dashes as underscores.
func EnvName(key string) string {
	return "BUCKETCTL_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

// BindEnv sets each flag not typed to its non-empty BUCKETCTL_<FLAG> variable; a value the
// flag refuses is a usage error naming the variable, with problem's words.
func BindEnv(flags *pflag.FlagSet, getenv func(string) string, problem func(*pflag.Flag, error) string) error {
	var err error
	flags.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || err != nil {
			return
		}
		v := getenv(EnvName(fl.Name))
		if v == "" {
			return
		}
		if serr := fl.Value.Set(v); serr != nil {
			err = Usagef("%s=%q: not a valid --%s: %s", EnvName(fl.Name), v, fl.Name, problem(fl, serr))
		}
	})
	return err
}
