package connect

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"go.yaml.in/yaml/v3"
)

// MaxConfigSize is the largest config file read.
const MaxConfigSize = 1 << 20

// readNode reads and parses the config file (parseNode); see readConfigFile for its errors.
func readNode(path string) (*yaml.Node, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return parseNode(path, data)
}

// readConfigFile reads a regular file of at most MaxConfigSize bytes; anything else is a
// usage error found before a byte is read. A missing file gives os.Stat's fs.ErrNotExist.
func readConfigFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := checkConfigStat(path, st); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, err
	}
	if err := checkConfigStat(path, st); err != nil { // replaced since
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxConfigSize {
		return nil, tooBig(path)
	}
	return data, nil
}

func checkConfigStat(path string, st fs.FileInfo) error {
	if !st.Mode().IsRegular() {
		return Usagef("config file %s: not a regular file (%s): it must be a YAML file of at most 1 MiB (point --config at one)", path, fileKind(st.Mode()))
	}
	if st.Size() > MaxConfigSize {
		return tooBig(path)
	}
	return nil
}

func tooBig(path string) error {
	return Usagef("config file %s: over the limit of 1 MiB: it must be a YAML file of at most 1 MiB (point --config at one)", path)
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// parseNode parses the file's one YAML document, a mapping (nil for an empty file).
func parseNode(path string, data []byte) (*yaml.Node, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil && !errors.Is(err, io.EOF) {
		return nil, Usagef("config file %s: %s (fix the YAML or point --config elsewhere)", path, yamlErrText(err))
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Usagef("config file %s: %s (fix the YAML or point --config elsewhere)", path, yamlErrText(err))
		}
		if len(next.Content) > 0 && next.Content[0].Tag != "!!null" {
			return nil, Usagef("config file %s, line %d: a second YAML document: the file holds one (remove the '---' and what follows, or merge them)", path, next.Content[0].Line)
		}
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode && !(doc.Kind == yaml.ScalarNode && doc.Tag == "!!null") {
		return nil, Usagef("config file %s, line %d: want a mapping of current-context, contexts, layouts and rules", path, doc.Line)
	}
	return doc, nil
}
