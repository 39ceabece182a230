package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Conn resolves the connection options.
func (f *Factory) Conn() (*ConnOptions, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil {
		return f.conn, nil
	}
	cc, name, err := cfg.contextFor(f.V.GetString("context"))
	if err != nil {
		return nil, err
	}
	v := f.V
	explicit := func(key string) bool { return f.givenAs(key) != "" }
	chosen, err := f.oneServer(cc, name)
	if err != nil {
		return nil, err
	}
	str := func(key, fromCtx string) string {
		if fromCtx == "" || explicit(key) {
			return v.GetString(key)
		}
		return fromCtx
	}
	list := func(key string, fromCtx []string) []string {
		if len(fromCtx) == 0 || explicit(key) {
			return splitList(v.GetStringSlice(key))
		}
		return fromCtx
	}
	serverCtx := name // the context that names the server, "" when a flag or variable does
	if chosen != "" {
		serverCtx = ""
	}
	o := &ConnOptions{
		Context:        serverCtx,
		URL:            str("url", cc.URL),
		Cluster:        list("cluster", cc.Cluster),
		SentinelMaster: str("sentinel-master", cc.SentinelMaster),
		SentinelAddrs:  list("sentinel-addrs", cc.SentinelAddrs),
		SentinelUser:   str("sentinel-user", cc.SentinelUser),
		User:           str("user", cc.User),
		TLSCA:          str("tls-ca", cc.TLSCA),
		TLSCert:        str("tls-cert", cc.TLSCert),
		TLSKey:         str("tls-key", cc.TLSKey),
		DialTimeout:    v.GetDuration("dial-timeout"),
		Timeout:        v.GetDuration("timeout"),
	}
	// The server named by a flag (or else a variable) is the only one: the other forms'
	// values, from variables or the context, are dropped.
	if chosen != "" && chosen != "url" {
		o.URL = ""
	}
	if chosen != "" && chosen != "cluster" {
		o.Cluster = nil
	}
	if chosen != "" && chosen != "sentinel" {
		o.SentinelMaster, o.SentinelAddrs = "", nil
	}
	if o.SentinelMaster == "" {
		o.SentinelUser = "" // no Sentinel: its credentials are not needed
	}
	o.InsecureSkipVerify = v.GetBool("insecure-skip-verify") || cc.InsecureSkipVerify
	if err := f.passwords(o, cc, name); err != nil {
		return nil, err
	}
	if o.URL == "" {
		o.URL = "redis://127.0.0.1:6379"
	}
	o.URL = normalizeURL(o.URL)
	if fl := f.Flags.Lookup("url"); fl != nil && fl.Changed {
		if _, ok := urlPassword(o.URL); ok {
			return nil, usagef("--url %s holds a password, which the command line would show to every user of this machine (ps, shell history): "+
				"put it in REDISCLI_AUTH or BUCKETCTL_PASSWORD, or in the config file's context (password-env)", redactURL(o.URL))
		}
	}
	if o.SentinelMaster != "" && len(o.SentinelAddrs) == 0 {
		return nil, usagef("--sentinel-master %q needs --sentinel-addrs host:port[,host:port]", o.SentinelMaster)
	}
	if err := f.checkAddrs(o); err != nil {
		return nil, err
	}
	if o.SentinelMaster == "" && len(o.SentinelAddrs) > 0 {
		return nil, usagef("--sentinel-addrs needs --sentinel-master NAME (the name the sentinels monitor, as in SENTINEL MASTERS)")
	}
	// go-redis sends no AUTH without a password: the user would be dropped silently and
	// the commands run as the default user, whatever its rights.
	// A URL's user (redis://ops@host) is held to the same rule as --user, and a password in
	// BUCKETCTL_URL or the context's url serves either (go-redis reads both from the URL).
	user, hasPassword := o.User, o.password != ""
	if len(o.Cluster) == 0 && o.SentinelMaster == "" {
		if u := urlUser(o.URL); user == "" && u != "" {
			user = u
		}
		if pw, ok := urlPassword(o.URL); ok && pw != "" {
			hasPassword = true
		}
	}
	if user != "" && !hasPassword {
		if o.User == "" {
			return nil, usagef("%s names the user %q but no password: set REDISCLI_AUTH or BUCKETCTL_PASSWORD (any value for a nopass user); "+
				"without one Redis would run the commands as the default user", f.source("url", name), safe(user))
		}
		return nil, usagef("%s %q has no password: set REDISCLI_AUTH or BUCKETCTL_PASSWORD (any value for a nopass user), "+
			"or the context's password-env; without one Redis would run the commands as the default user", f.source("user", name), safe(o.User))
	}
	if o.SentinelUser != "" && o.sentinelPassword == "" {
		return nil, usagef("%s %q has no password: set BUCKETCTL_SENTINEL_PASSWORD, or the context's sentinel-password-env", f.source("sentinel-user", name), safe(o.SentinelUser))
	}
	for _, d := range []struct {
		key string
		val time.Duration
	}{{"dial-timeout", o.DialTimeout}, {"timeout", o.Timeout}} {
		if d.val <= 0 {
			return nil, usagef("%s %v: must be above 0 (e.g. 2s)", f.source(d.key, name), d.val)
		}
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, usagef("--tls-cert and --tls-key go together")
	}
	f.conn = o
	return o, nil
}

// givenAs names how key was given by flag or environment ("--url", "BUCKETCTL_URL"), or ""
// when neither gave it.
func (f *Factory) givenAs(key string) string { return firstOf(f.flagGiven(key), f.envGiven(key)) }

// source names where key's value came from, for a message: the flag, its variable, or the
// context.
func (f *Factory) source(key, ctxName string) string {
	if g := f.givenAs(key); g != "" {
		return g
	}
	if ctxName != "" {
		return fmt.Sprintf("context %q's %s", ctxName, key)
	}
	return "--" + key
}

// oneServer makes sure one server is named: by --url, --cluster, or --sentinel-master with
// --sentinel-addrs; else by their variables (BUCKETCTL_URL...); else by the context. Two
// forms given at the same level are a usage error, not a silent choice; a flag wins over
// a variable, and either replaces the context's server whatever form the context names it
// in. chosen is the form given by a flag or variable, "" when the context decides.
func (f *Factory) oneServer(cc ContextConfig, ctxName string) (chosen string, _ error) {
	forms := []struct{ name, flag, env string }{
		{"url", f.flagGiven("url"), f.envGiven("url")},
		{"cluster", f.flagGiven("cluster"), f.envGiven("cluster")},
		{"sentinel", firstOf(f.flagGiven("sentinel-master"), f.flagGiven("sentinel-addrs")),
			firstOf(f.envGiven("sentinel-master"), f.envGiven("sentinel-addrs"))},
	}
	const fix = "give one of --url, --cluster, or --sentinel-master with --sentinel-addrs"
	for _, level := range []func(i int) string{
		func(i int) string { return forms[i].flag },
		func(i int) string { return forms[i].env },
	} {
		var given []string
		for i := range forms {
			if by := level(i); by != "" {
				given, chosen = append(given, by), forms[i].name
			}
		}
		if len(given) > 1 {
			return "", usagef("%s and %s both name the server: %s", given[0], given[1], fix)
		}
		if chosen != "" {
			break
		}
	}
	if chosen == "" {
		n := 0
		for _, set := range []bool{cc.URL != "", len(cc.Cluster) > 0, cc.SentinelMaster != "" || len(cc.SentinelAddrs) > 0} {
			if set {
				n++
			}
		}
		if n > 1 {
			return "", usagef("context %q names more than one server (url, cluster, sentinel-master): keep one in the config file", ctxName)
		}
	}
	return chosen, nil
}

// flagGiven is "--key" when the flag was given on the command line, else "".
func (f *Factory) flagGiven(key string) string {
	if fl := f.Flags.Lookup(key); fl != nil && fl.Changed {
		return "--" + key
	}
	return ""
}

// envGiven is the name of key's variable when it is set, else "".
func (f *Factory) envGiven(key string) string {
	if f.getenv(envName(key)) != "" {
		return envName(key)
	}
	return ""
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// passwords sets the data nodes' and the sentinels' passwords. They never come from argv:
// the environment first, then the context (its password-env, else its password). A
// password-env naming an unset variable is a usage error, not a silent "no password".
func (f *Factory) passwords(o *ConnOptions, cc ContextConfig, ctxName string) error {
	fromEnv := func(field, name string) (string, error) {
		if v := f.getenv(name); v != "" {
			return v, nil
		}
		return "", usagef("context %q: %s names the environment variable %s, which is not set (export it, or remove %s)", ctxName, field, name, field)
	}
	var err error
	switch {
	case f.getenv("BUCKETCTL_PASSWORD") != "":
		o.password = f.getenv("BUCKETCTL_PASSWORD")
	case f.getenv("REDISCLI_AUTH") != "":
		o.password = f.getenv("REDISCLI_AUTH")
	case cc.PasswordEnv != "":
		if o.password, err = fromEnv("password-env", cc.PasswordEnv); err != nil {
			return err
		}
	case cc.Password != "":
		o.password = cc.Password
	}
	switch {
	case o.SentinelMaster == "":
		// No Sentinel: no sentinel password is looked for.
	case f.getenv("BUCKETCTL_SENTINEL_PASSWORD") != "":
		o.sentinelPassword = f.getenv("BUCKETCTL_SENTINEL_PASSWORD")
	case cc.SentinelPasswordEnv != "":
		if o.sentinelPassword, err = fromEnv("sentinel-password-env", cc.SentinelPasswordEnv); err != nil {
			return err
		}
	}
	return nil
}

func envName(key string) string {
	return "BUCKETCTL_" + strings.ToUpper(strings.ReplaceAll(key, "-", "_"))
}

func splitList(in []string) []string {
	var out []string
	for _, s := range in {
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

// bindEnv gives each persistent flag not set on the command line the value of its
// BUCKETCTL_<FLAG> variable (dashes as underscores) from the Factory's environment, when
// that is set and not empty: flags win over the environment, the environment over the
// config file (whose contexts only fill what neither gave; see Conn). A value the flag
// would refuse (BUCKETCTL_TIMEOUT=abc) is a usage error naming the variable, not ignored.
func (f *Factory) bindEnv(flags *pflag.FlagSet) error {
	var err error
	flags.VisitAll(func(fl *pflag.Flag) {
		if fl.Changed || err != nil {
			return
		}
		v := f.getenv(envName(fl.Name))
		if v == "" {
			return
		}
		if serr := fl.Value.Set(v); serr != nil {
			err = usagef("%s=%q: not a valid --%s: %s", envName(fl.Name), v, fl.Name, valueProblem(fl, serr))
			return
		}
		f.V.Set(fl.Name, v)
	})
	return err
}
