package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// contextFlags are the connection flags set-context writes into a context, by name: the
// context's keys are the flags' names.
var contextFlags = []string{"url", "cluster", "sentinel-master", "sentinel-addrs", "sentinel-user", "user",
	"tls-ca", "tls-cert", "tls-key", "insecure-skip-verify"}

func newCmdSetContext(f *Factory) *cobra.Command {
	var (
		current             bool
		passwordEnv         string
		sentinelPasswordEnv string
		unset               []string
	)
	cmd := &cobra.Command{
		Use:   "set-context [NAME | --current] [connection flags]",
		Short: "Create or change a context with the connection flags given",
		Long: `Create the context NAME, or change it, with the connection flags given on this command
line (--url, --cluster, --sentinel-master, --sentinel-addrs, --sentinel-user, --user,
--tls-ca, --tls-cert, --tls-key, --insecure-skip-verify); other keys are kept. The file
is written in place, comments kept; a new file is created readable by you only.

Passwords never go on the command line: --password-env names the environment variable
that holds the password (as REDISCLI_AUTH would), and a --url holding a password is
refused.`,
		Example: `  bucketctl config set-context local --url 127.0.0.1:6379
  bucketctl config set-context prod --cluster 10.0.0.1:6379,10.0.0.2:6379 --user ops --password-env PROD_REDIS_PASSWORD --tls-ca /etc/ssl/redis-ca.pem
  bucketctl config set-context --current --user ops-readonly
  bucketctl config set-context prod --unset tls-ca`,
		ValidArgsFunction: completeContextArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) > 1:
				return usagef("set-context takes one context name, got %d (see '%s --help')", len(args), cmd.CommandPath())
			case len(args) == 0 && !current:
				return usagef("set-context needs a context name, or --current for the current one (see '%s --help')", cmd.CommandPath())
			case len(args) == 1 && current:
				return usagef("set-context needs a context name or --current, not both (see '%s --help')", cmd.CommandPath())
			}
			for _, u := range unset {
				if !isContextField(u) {
					return usagef("--unset %q: not a context field (fields: %s)", u, strings.Join(contextFieldNames(), ", "))
				}
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			name := ""
			if current {
				if name = cfg.CurrentContext; name == "" {
					return usagef("--current: current-context is not set (name the context, or 'bucketctl config use-context NAME')")
				}
			} else {
				name = args[0]
			}
			values, err := f.changedContextFlags()
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("password-env") {
				values["password-env"] = scalarNode(passwordEnv)
			}
			if cmd.Flags().Changed("sentinel-password-env") {
				values["sentinel-password-env"] = scalarNode(sentinelPasswordEnv)
			}
			path := f.configPath()
			doc, err := readConfigDoc(path)
			if err != nil {
				return err
			}
			contexts := mapValue(doc, "contexts")
			if contexts == nil || contexts.Kind != yaml.MappingNode {
				contexts = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				setNode(doc, "contexts", contexts)
			}
			ctx := mapValue(contexts, name)
			verb := "modified"
			if ctx == nil || ctx.Kind != yaml.MappingNode {
				ctx, verb = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, "created"
				setNode(contexts, name, ctx)
			}
			// A context names one server: a new one in another form replaces the old.
			if err := replaceServer(ctx, values); err != nil {
				return err
			}
			for _, k := range contextFlagOrder(values) {
				setNode(ctx, k, values[k])
			}
			for _, u := range unset {
				removeKey(ctx, u)
			}
			if err := writeConfigDoc(path, doc); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Context %q %s in %s.\n", name, verb, path)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&current, "current", false, "change the current context")
	fl.StringVar(&passwordEnv, "password-env", "", "environment variable holding the password (never the password itself)")
	fl.StringVar(&sentinelPasswordEnv, "sentinel-password-env", "", "environment variable holding the sentinels' password")
	fl.StringSliceVar(&unset, "unset", nil, "remove these fields from the context (e.g. tls-ca,user)")
	return cmd
}

// serverForms are a context's ways to name its server, each with its fields.
var serverForms = [][]string{{"url"}, {"cluster"}, {"sentinel-master", "sentinel-addrs", "sentinel-user", "sentinel-password-env"}}

// replaceServer removes from ctx the server forms that values does not name, when values
// names one: set-context --cluster on a url context makes it a Cluster context, not one
// that names two servers (which every command would then refuse). Two forms in values
// are a usage error.
func replaceServer(ctx *yaml.Node, values map[string]*yaml.Node) error {
	named := -1
	for i, form := range serverForms {
		for _, k := range form[:min(2, len(form))] {
			if _, ok := values[k]; ok {
				if named >= 0 && named != i {
					return usagef("--%s and --%s both name the server: a context names one (give one of --url, --cluster, or --sentinel-master with --sentinel-addrs)",
						serverForms[named][0], k)
				}
				named = i
			}
		}
	}
	if named < 0 {
		return nil
	}
	for i, form := range serverForms {
		if i != named {
			for _, k := range form {
				removeKey(ctx, k)
			}
		}
	}
	return nil
}

// changedContextFlags returns the connection flags given on the command line, as YAML
// values. A --url holding a password is refused.
func (f *Factory) changedContextFlags() (map[string]*yaml.Node, error) {
	out := map[string]*yaml.Node{}
	for _, name := range contextFlags {
		fl := f.Flags.Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		switch name {
		case "cluster", "sentinel-addrs":
			seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
			for _, a := range splitList(f.V.GetStringSlice(name)) {
				seq.Content = append(seq.Content, scalarNode(a))
			}
			out[name] = seq
		case "insecure-skip-verify":
			out[name] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fl.Value.String()}
		case "url":
			u := normalizeURL(fl.Value.String())
			if _, ok := urlPassword(u); ok {
				return nil, usagef("--url %s holds a password, which the command line would show to every user of this machine: "+
					"use --password-env VAR (the variable holding the password) instead", redactURL(u))
			}
			out[name] = scalarNode(u)
		default:
			out[name] = scalarNode(fl.Value.String())
		}
	}
	return out, nil
}

func scalarNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// contextFlagOrder lists the keys of values in the order of the context's fields.
func contextFlagOrder(values map[string]*yaml.Node) []string {
	var out []string
	for _, k := range contextFieldNames() {
		if _, ok := values[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// contextFieldNames are the keys a context may hold, in declaration order.
func contextFieldNames() []string {
	return []string{"url", "cluster", "sentinel-master", "sentinel-addrs", "sentinel-user", "sentinel-password-env",
		"user", "password", "password-env", "tls-ca", "tls-cert", "tls-key", "insecure-skip-verify"}
}

func isContextField(s string) bool {
	for _, n := range contextFieldNames() {
		if n == s {
			return true
		}
	}
	return false
}
