package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/bucketctl/bucketctl"

// readmeLayers reads the layers of the README's Design section: one line each, top first,
// its packages before the first run of two spaces, comma-separated; "x/…" stands for the
// packages under x.
func readmeLayers(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var layers [][]string
	inDesign, inBlock := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inDesign = line == "## Design"
		case inDesign && strings.HasPrefix(line, "```"):
			if inBlock {
				return layers
			}
			inBlock = true
		case inBlock:
			names, _, _ := strings.Cut(line, "  ")
			var layer []string
			for _, n := range strings.Split(names, ",") {
				layer = append(layer, strings.TrimSuffix(strings.TrimSpace(n), ".go"))
			}
			layers = append(layers, layer)
		}
	}
	t.Fatal("README.md: no layers block in the Design section")
	return nil
}

// layerOf is the layer of pkg (a path inside the module, "main" for the root): an exact
// name wins over an "x/…" pattern.
func layerOf(layers [][]string, pkg string) int {
	best, bestLen := -1, -1
	for i, layer := range layers {
		for _, pat := range layer {
			switch {
			case pat == pkg:
				return i
			case strings.HasSuffix(pat, "/…") && strings.HasPrefix(pkg, strings.TrimSuffix(pat, "…")) && len(pat) > bestLen:
				best, bestLen = i, len(pat)
			}
		}
	}
	return best
}

// TestDesignLayers: every package of the module is in one of the README's layers, and
// imports only packages of its own layer or of layers below.
func TestDesignLayers(t *testing.T) {
	layers := readmeLayers(t)
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rel := func(p string) string {
		if p == module {
			return "main"
		}
		return strings.TrimPrefix(p, module+"/")
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(fields[0])
		from := layerOf(layers, pkg)
		if from < 0 {
			t.Errorf("package %s is in no layer of the README's Design section", pkg)
			continue
		}
		n++
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			if to := layerOf(layers, rel(imp)); to < from {
				t.Errorf("%s imports %s, a layer above it in the README's Design section", pkg, rel(imp))
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d packages checked: %s", n, out)
	}
}
