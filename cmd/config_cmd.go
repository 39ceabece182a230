package cmd

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// NewCmdConfig groups the verbs that read and edit the config file, as kubectl's do.
func NewCmdConfig(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show and edit the config file's contexts (like kubectl config)",
		Long: `The config file (` + f.DefaultConfigPath() + `, or --config) holds named contexts:
connection settings with the connection flags' names (url, cluster, sentinel-master,
sentinel-addrs, user, password-env, tls-ca, ...). Edits write the file in place and keep
its comments. No verb ever prints a password: view shows them as xxxxx.`,
		Example: `  bucketctl config get-contexts
  bucketctl config set-context prod --cluster 10.0.0.1:6379 --user ops --password-env PROD_REDIS_PASSWORD
  bucketctl config use-context prod
  bucketctl config view`,
		Args: cobra.ArbitraryArgs,
		RunE: groupRun,
	}
	cmd.AddCommand(newCmdConfigView(f), newCmdGetContexts(f), newCmdCurrentContext(f),
		newCmdUseContext(f), newCmdSetContext(f))
	return cmd
}

// configPath is the file the config verbs read and write.
func (f *Factory) configPath() string {
	if p := f.V.GetString("config"); p != "" {
		return p
	}
	return f.DefaultConfigPath()
}

func newCmdConfigView(f *Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Print the config file, passwords redacted",
		Long: `Print the config file as it is written (comments included), with every password and
every password inside a URL replaced by xxxxx. -o json prints the decoded settings.`,
		Example: "  bucketctl config view\n  bucketctl config view -o json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, FormatYAML, FormatJSON); err != nil {
				return err
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if output == FormatJSON {
				return writeData(f.IO.Out, FormatJSON, redactConfig(cfg))
			}
			doc, err := readConfigDoc(f.configPath())
			if err != nil {
				return err
			}
			redactNode(doc)
			return encodeNode(f.IO.Out, doc)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", FormatYAML, "output format: yaml|json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(FormatYAML, FormatJSON))
	return cmd
}

func newCmdGetContexts(f *Factory) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "get-contexts [NAME...]",
		Short:   "List the contexts (the current one marked *)",
		Example: "  bucketctl config get-contexts\n  bucketctl config get-contexts prod -o json\n  bucketctl config get-contexts -o name",
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(output, FormatTable, FormatJSON, FormatYAML, "name"); err != nil {
				return err
			}
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			names := args
			for _, n := range names {
				if _, _, err := cfg.contextFor(n); err != nil {
					return err
				}
			}
			if len(names) == 0 {
				names = contextNames(cfg)
			}
			type row struct {
				Name    string `json:"name" yaml:"name"`
				Current bool   `json:"current" yaml:"current"`
				Server  string `json:"server" yaml:"server"`
				User    string `json:"user,omitempty" yaml:"user,omitempty"`
			}
			rows := make([]row, 0, len(names))
			for _, n := range names {
				c := cfg.Contexts[n]
				rows = append(rows, row{Name: n, Current: n == cfg.CurrentContext, Server: contextServer(c), User: c.User})
			}
			switch output {
			case "name":
				for _, r := range rows {
					fmt.Fprintln(f.IO.Out, r.Name)
				}
				return nil
			case FormatJSON, FormatYAML:
				return writeData(f.IO.Out, output, rows)
			}
			t := newTable(f.IO, "CURRENT", "NAME", "SERVER", "USER")
			for _, r := range rows {
				cur := ""
				if r.Current {
					cur = "*"
				}
				t.add(cur, r.Name, r.Server, r.User)
			}
			return t.render()
		},
		ValidArgsFunction: completeContextArgs(f),
	}
	cmd.Flags().StringVarP(&output, "output", "o", FormatTable, "output format: table|json|yaml|name")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions(FormatTable, FormatJSON, FormatYAML, "name"))
	return cmd
}

func newCmdCurrentContext(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "current-context",
		Short:   "Print the current context's name",
		Example: "  bucketctl config current-context",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if cfg.CurrentContext == "" {
				return errors.New("current-context is not set (set it with 'bucketctl config use-context NAME')")
			}
			_, err = fmt.Fprintln(f.IO.Out, cfg.CurrentContext)
			return err
		},
	}
}

func newCmdUseContext(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "use-context NAME",
		Short:             "Make NAME the current context (writes current-context)",
		Example:           "  bucketctl config use-context prod",
		Args:              exactArgs(1, "a context name"),
		ValidArgsFunction: completeContextArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if _, _, err := cfg.contextFor(args[0]); err != nil {
				return err
			}
			path := f.configPath()
			doc, err := readConfigDoc(path)
			if err != nil {
				return err
			}
			setScalar(doc, "current-context", args[0])
			if err := writeConfigDoc(path, doc); err != nil {
				return err
			}
			fmt.Fprintf(f.IO.ErrOut, "Switched to context %q.\n", args[0])
			return nil
		},
	}
}

// contextNames lists the config's contexts, sorted.
func contextNames(cfg *Config) []string {
	names := make([]string, 0, len(cfg.Contexts))
	for n := range cfg.Contexts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// contextServer names where a context connects, without credentials.
func contextServer(c ContextConfig) string {
	switch {
	case len(c.Cluster) > 0:
		return "cluster " + strings.Join(c.Cluster, ",")
	case c.SentinelMaster != "":
		return fmt.Sprintf("sentinel %s via %s", c.SentinelMaster, strings.Join(c.SentinelAddrs, ","))
	case c.URL != "":
		return redactURL(normalizeURL(c.URL))
	}
	return "redis://127.0.0.1:6379"
}

// redactConfig returns a copy of cfg without passwords.
func redactConfig(cfg *Config) *Config {
	out := *cfg
	out.Contexts = make(map[string]ContextConfig, len(cfg.Contexts))
	for n, c := range cfg.Contexts {
		if c.Password != "" {
			c.Password = redacted
		}
		c.URL = redactURL(c.URL)
		out.Contexts[n] = c
	}
	return &out
}

// redactNode replaces, in place, every password value and every URL's password.
func redactNode(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && (k.Value == "password" || k.Value == "sentinel-password") && v.Value != "" {
				v.Value, v.Style = redacted, 0
			}
		}
	}
	if n.Kind == yaml.ScalarNode {
		n.Value = redactURL(n.Value)
	}
	for _, c := range n.Content {
		redactNode(c)
	}
}

// readConfigDoc reads the file's document node; a missing file gives an empty mapping.
func readConfigDoc(path string) (*yaml.Node, error) {
	if path == "" {
		return nil, usagef("no config directory on this system: pass --config FILE")
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	if err != nil {
		return nil, usagef("config file %s: %v", path, unwrapPathErr(err))
	}
	doc, err := parseConfigNode(path, data)
	if err != nil {
		return nil, err
	}
	if doc == nil || doc.Kind != yaml.MappingNode {
		doc = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: headComment(doc)}
	}
	return doc, nil
}

func headComment(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.HeadComment
}

func encodeNode(w interface{ Write([]byte) (int, error) }, doc *yaml.Node) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// writeConfigDoc replaces the file with doc, atomically (a temporary file renamed over
// it), keeping the file's mode; a new file is private (0600) in a private directory.
func writeConfigDoc(path string, doc *yaml.Node) error {
	var buf bytes.Buffer
	if err := encodeNode(&buf, doc); err != nil {
		return err
	}
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.yaml")
	if err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

// mapValue returns the value node of key in mapping m, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setNode sets key in mapping m to v, in place when the key exists (keeping its comments).
func setNode(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.LineComment, v.HeadComment, v.FootComment = old.LineComment, old.HeadComment, old.FootComment
			if old.Kind == v.Kind && v.Kind != yaml.ScalarNode {
				v.Style = old.Style
			}
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

func setScalar(m *yaml.Node, key, value string) {
	setNode(m, key, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// removeKey deletes key from mapping m.
func removeKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s (see '%s --help')", cmd.Name(), what, cmd.CommandPath())
		}
		return nil
	}
}

func completeContextArgs(f *Factory) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	inner := completeContexts(f)
	return func(cmd *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 && cmd.Name() != "get-contexts" {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return inner(cmd, args, s)
	}
}
