package connect

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// ReadDoc reads the file's document node; a missing file gives an empty mapping.
func ReadDoc(path string) (*yaml.Node, error) {
	if path == "" {
		return nil, Usagef("no config directory on this system: pass --config FILE")
	}
	doc, err := readNode(path)
	var ue *UsageError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	case errors.As(err, &ue):
		return nil, err
	case err != nil:
		return nil, Usagef("config file %s: %v", path, unwrapPathErr(err))
	case doc == nil:
		doc = &yaml.Node{}
	}
	if doc.Kind != yaml.MappingNode {
		doc = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", HeadComment: doc.HeadComment}
	}
	return doc, nil
}

// WriteDoc replaces the file with doc atomically, keeping its mode (a new file's is 0600).
func WriteDoc(path string, doc *yaml.Node) error {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if err := writeAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("config file %s: %w", path, err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// MapValue returns the value node of key in mapping m, or nil.
func MapValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// SetNode sets key in mapping m to v, in place when the key exists (keeping its comments).
func SetNode(m *yaml.Node, key string, v *yaml.Node) {
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
	m.Content = append(m.Content, ScalarNode(key), v)
}

// RemoveKey deletes key from mapping m.
func RemoveKey(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

// serverForms are the ways to name a server, each with its fields (the first two name it).
var serverForms = [][]string{{"url"}, {"cluster"}, {"sentinel-master", "sentinel-addrs", "sentinel-user", "sentinel-password-env"}}

const oneServer = "give one of --url, --cluster, or --sentinel-master with --sentinel-addrs"

// SetContext creates or changes the context name in doc, keeping other keys and every
// comment: values are set (a server form replaces the others), then unset removed.
func SetContext(doc *yaml.Node, name string, values map[string]*yaml.Node, unset []string) (verb string, err error) {
	contexts := MapValue(doc, "contexts")
	if contexts == nil || contexts.Kind != yaml.MappingNode {
		contexts = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		SetNode(doc, "contexts", contexts)
	}
	ctx := MapValue(contexts, name)
	verb = "modified"
	if ctx == nil || ctx.Kind != yaml.MappingNode {
		ctx, verb = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, "created"
		SetNode(contexts, name, ctx)
	}
	if err := replaceServer(ctx, values); err != nil {
		return "", err
	}
	for _, k := range ContextFields {
		if v, ok := values[k]; ok {
			SetNode(ctx, k, v)
		}
	}
	for _, u := range unset {
		RemoveKey(ctx, u)
	}
	return verb, nil
}

// replaceServer removes from ctx the server forms other than the one values names.
func replaceServer(ctx *yaml.Node, values map[string]*yaml.Node) error {
	named := -1
	for i, form := range serverForms {
		for _, k := range form[:min(2, len(form))] {
			if _, ok := values[k]; ok {
				if named >= 0 && named != i {
					return Usagef("--%s and --%s both name the server: a context names one (%s)", serverForms[named][0], k, oneServer)
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
				RemoveKey(ctx, k)
			}
		}
	}
	return nil
}

// ContextFields are the keys a context may hold, in declaration order.
var ContextFields = []string{"url", "cluster", "sentinel-master", "sentinel-addrs", "sentinel-user", "sentinel-password-env",
	"user", "password", "password-env", "tls-ca", "tls-cert", "tls-key", "insecure-skip-verify"}

// ScalarNode is a YAML string.
func ScalarNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// ContextServer names where a context connects, without credentials.
func ContextServer(c ContextConfig) string {
	return describeServer(c.Cluster, c.SentinelMaster, c.SentinelAddrs, NormalizeURL(c.URL))
}

// RedactConfig returns a copy of cfg without secrets.
func RedactConfig(cfg *Config) *Config {
	out := *cfg
	out.Contexts = make(map[string]ContextConfig, len(cfg.Contexts))
	for n, c := range cfg.Contexts {
		if c.Password != "" {
			c.Password = Redacted
		}
		c.URL = redactURLField(c.URL)
		c.Cluster = redactList(c.Cluster)
		c.SentinelAddrs = redactList(c.SentinelAddrs)
		out.Contexts[n] = c
	}
	return &out
}

// RedactNode hides, in place, every password field's value and every other secret.
func RedactNode(n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.ScalarNode && (k.Value == "password" || k.Value == "sentinel-password") && v.Value != "" {
				v.Value, v.Style = Redacted, 0
			}
			if v.Kind == yaml.ScalarNode && k.Value == "url" {
				v.Value = redactURLField(v.Value)
			}
		}
	}
	if n.Kind == yaml.ScalarNode {
		n.Value = RedactValue(n.Value)
	}
	if n.Kind == yaml.SequenceNode && !slices.ContainsFunc(n.Content, func(c *yaml.Node) bool { return c.Kind != yaml.ScalarNode }) {
		items := make([]string, len(n.Content))
		for i, c := range n.Content {
			items[i] = c.Value
		}
		for i, v := range redactList(items) {
			n.Content[i].Value = v
		}
		return
	}
	for _, c := range n.Content {
		RedactNode(c)
	}
}

// redactURLField hides a url field's secrets as the parser reads it.
func redactURLField(v string) string {
	n := NormalizeURL(v)
	if r := RedactValue(n); r != n {
		return r
	}
	return RedactValue(v)
}
