package connect

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/rules"
	"github.com/bucketctl/bucketctl/bucket/units"
)

// Config is the config file: contexts, custom layouts and rules ('bucketctl help config-file').
type Config struct {
	CurrentContext string                   `yaml:"current-context" json:"current-context,omitempty"`
	Contexts       map[string]ContextConfig `yaml:"contexts" json:"contexts,omitempty"`
	Layouts        map[string]bucket.Layout `yaml:"layouts" json:"layouts,omitempty"`
	Rules          []Rule                   `yaml:"rules" json:"rules,omitempty"`
	Path           string                   `yaml:"-" json:"-"` // the file read, if any

	ruleTable   *rules.Table
	defaultPath string
}

// ContextConfig holds one named connection. Its keys are the connection flags' names.
type ContextConfig struct {
	URL                 string   `yaml:"url,omitempty" json:"url,omitempty"`
	Cluster             []string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
	SentinelMaster      string   `yaml:"sentinel-master,omitempty" json:"sentinel-master,omitempty"`
	SentinelAddrs       []string `yaml:"sentinel-addrs,omitempty" json:"sentinel-addrs,omitempty"`
	SentinelUser        string   `yaml:"sentinel-user,omitempty" json:"sentinel-user,omitempty"`
	SentinelPasswordEnv string   `yaml:"sentinel-password-env,omitempty" json:"sentinel-password-env,omitempty"`
	User                string   `yaml:"user,omitempty" json:"user,omitempty"`
	Password            string   `yaml:"password,omitempty" json:"password,omitempty"`
	PasswordEnv         string   `yaml:"password-env,omitempty" json:"password-env,omitempty"`
	TLSCA               string   `yaml:"tls-ca,omitempty" json:"tls-ca,omitempty"`
	TLSCert             string   `yaml:"tls-cert,omitempty" json:"tls-cert,omitempty"`
	TLSKey              string   `yaml:"tls-key,omitempty" json:"tls-key,omitempty"`
	InsecureSkipVerify  bool     `yaml:"insecure-skip-verify,omitempty" json:"insecure-skip-verify,omitempty"`

	empty []string // server fields given empty (url: ""): an error, not the default server
}

// Rule is a rule as written: keys matching a glob get a layout and a spec (rules.Rule).
type Rule struct {
	Name     string      `yaml:"name,omitempty" json:"name,omitempty"`
	Match    string      `yaml:"match" json:"match,omitempty"`
	Layout   string      `yaml:"layout,omitempty" json:"layout,omitempty"`
	Capacity AmountValue `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	Rate     RateValue   `yaml:"rate,omitempty" json:"rate,omitempty"`
	Cost     AmountValue `yaml:"cost,omitempty" json:"cost,omitempty"`
	Plan     string      `yaml:"plan,omitempty" json:"plan,omitempty"`
}

// DefaultPath is the config file under os.UserConfigDir's directory, read from getenv.
func DefaultPath(getenv func(string) string) string {
	if dir := userConfigDir(runtime.GOOS, getenv); dir != "" {
		return filepath.Join(dir, "bucketctl", "config.yaml")
	}
	return ""
}

// userConfigDir mirrors os.UserConfigDir for goos over getenv ("" where it would fail).
func userConfigDir(goos string, getenv func(string) string) string {
	under := func(env, sub string) string {
		if home := getenv(env); home != "" {
			return home + sub
		}
		return ""
	}
	switch goos {
	case "windows":
		return getenv("AppData")
	case "darwin", "ios":
		return under("HOME", "/Library/Application Support")
	case "plan9":
		return under("home", "/lib")
	}
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" {
		return under("HOME", "/.config")
	}
	if !filepath.IsAbs(dir) {
		return ""
	}
	return dir
}

// Load reads the config file (path, else defaultPath), strictly; a missing file is an
// error only when it was named.
func Load(path, defaultPath string) (*Config, error) {
	explicit := path != ""
	if !explicit {
		path = defaultPath
	}
	cfg := &Config{defaultPath: defaultPath}
	if path == "" {
		return cfg, nil
	}
	doc, err := readNode(path)
	var ue *UsageError
	switch {
	case errors.As(err, &ue):
		return nil, err
	case errors.Is(err, fs.ErrNotExist) && !explicit:
		return cfg, nil
	case err != nil:
		return nil, Usagef("config file %s: %v (create it, or point --config elsewhere)", path, unwrapPathErr(err))
	}
	if doc != nil {
		if err := checkFields(path, doc, reflect.TypeOf(Config{}), "", ""); err != nil {
			return nil, err
		}
		if err := doc.Decode(cfg); err != nil {
			return nil, Usagef("config file %s: %s", path, yamlErrText(err))
		}
		cfg.noteEmptyServers(doc)
	}
	cfg.Path = path
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// yamlErrText is a YAML error in one line, without the values it quotes (a password?).
func yamlErrText(err error) string {
	msg := strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n", "; "), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msg = strings.Join(te.Errors, "; ")
	}
	parts := strings.Split(msg, "`")
	for i := 1; i < len(parts)-1; i += 2 {
		parts[i] = "(value not shown)"
	}
	if len(parts)%2 == 0 {
		parts[len(parts)-1] = "(value not shown)"
	}
	return strings.Join(parts, "")
}

func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// validate checks the decoded layouts and rules, and builds the rules table.
func (cfg *Config) validate() error {
	path := cfg.Path
	for name, l := range cfg.Layouts {
		l.Name = cmp.Or(l.Name, name)
		l = l.WithLike()
		if err := l.Validate(); err != nil {
			return Usagef("config file %s: %v", path, err)
		}
		cfg.Layouts[name] = l
	}
	list := make([]rules.Rule, len(cfg.Rules))
	for i := range cfg.Rules {
		r := &cfg.Rules[i]
		if r.Match == "" {
			return Usagef("config file %s: rule %d has no match pattern", path, i+1)
		}
		r.Name = cmp.Or(r.Name, r.Match)
		list[i] = rules.Rule{Name: r.Name, Match: r.Match, Spec: bucket.Spec{Capacity: float64(r.Capacity), Rate: float64(r.Rate)}, Cost: float64(r.Cost)}
		if r.Layout != "" {
			l, err := cfg.Layout(r.Layout)
			if err != nil {
				return Usagef("config file %s: rule %q: %v", path, r.Name, err)
			}
			list[i].Layout = &l
		}
		if !list[i].Spec.IsZero() {
			if err := list[i].Spec.Validate(); err != nil {
				return Usagef("config file %s: rule %q: %s", path, r.Name, strings.TrimPrefix(err.Error(), bucket.ErrInvalid.Error()+": "))
			}
		}
	}
	table, err := rules.New(list)
	if err != nil {
		return Usagef("config file %s: %v", path, err)
	}
	cfg.ruleTable = table
	return nil
}

// Layout finds a layout by name among the presets and the config's custom layouts.
func (c *Config) Layout(name string) (bucket.Layout, error) {
	if l, ok := c.Layouts[name]; ok {
		return l, nil
	}
	if l, err := bucket.LookupLayout(name); err == nil {
		return l, nil
	}
	names := append(bucket.PresetNames(), slices.Collect(maps.Keys(c.Layouts))...)
	sort.Strings(names)
	return bucket.Layout{}, Usagef("unknown layout %q (known: %s)", name, strings.Join(names, ", "))
}

func (c *Config) CustomLayouts() []bucket.Layout { return slices.Collect(maps.Values(c.Layouts)) }

// ContextFor returns the context name (else current-context) and its name, if any.
func (c *Config) ContextFor(name string) (ContextConfig, string, error) {
	if name = cmp.Or(name, c.CurrentContext); name == "" {
		return ContextConfig{}, "", nil
	}
	ctx, ok := c.Contexts[name]
	if !ok {
		names := c.ContextNames()
		if c.Path == "" {
			return ContextConfig{}, "", Usagef("context %q: there is no config file (%s): create one with 'bucketctl config set-context %s --url host:port'", name, c.defaultPath, name)
		}
		hint := fmt.Sprintf("known: %s", strings.Join(names, ", "))
		if len(names) == 0 {
			hint = "it has no contexts"
		}
		if s := Closest(name, names); s != "" {
			hint = fmt.Sprintf("did you mean %q?", s)
		}
		return ContextConfig{}, "", Usagef("context %q not found in %s (%s)", name, c.Path, hint)
	}
	return ctx, name, nil
}

// noteEmptyServers records each context's server fields given empty (url: "", cluster: []).
func (c *Config) noteEmptyServers(doc *yaml.Node) {
	contexts := MapValue(doc, "contexts")
	if contexts == nil || contexts.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(contexts.Content); i += 2 {
		name, body := contexts.Content[i].Value, contexts.Content[i+1]
		cc, ok := c.Contexts[name]
		if !ok || body.Kind != yaml.MappingNode {
			continue
		}
		for _, k := range []string{"url", "cluster", "sentinel-master", "sentinel-addrs"} {
			v := MapValue(body, k)
			if v != nil && ((v.Kind == yaml.ScalarNode && strings.TrimSpace(v.Value) == "") || len(v.Content) == 0 && v.Kind == yaml.SequenceNode ||
				v.Tag == "!!null") {
				cc.empty = append(cc.empty, k)
			}
		}
		c.Contexts[name] = cc
	}
}

func (c *Config) RuleTable() *rules.Table { return c.ruleTable }

func (c *Config) ContextNames() []string { return slices.Sorted(maps.Keys(c.Contexts)) }

// RateValue is a rate as the rate flags read it: 5, 5/s, 300/m.
type RateValue float64

func (r *RateValue) UnmarshalYAML(node *yaml.Node) error {
	v, err := units.ParseRate(node.Value)
	if err != nil || node.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: rate %q: %v", node.Line, node.Value, err)
	}
	*r = RateValue(v)
	return nil
}

// AmountValue is a number as the number flags read it: 100, 2.5, 1,000, 10k.
type AmountValue float64

func (a *AmountValue) UnmarshalYAML(node *yaml.Node) error {
	if node.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d, column %d: want a number, such as %s", node.Line, node.Column, units.AmountExample)
	}
	v, err := units.ParseAmount(node.Value)
	if err != nil {
		return fmt.Errorf("line %d, column %d: %q: %v", node.Line, node.Column, node.Value, err)
	}
	*a = AmountValue(v)
	return nil
}
