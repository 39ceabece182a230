package cmd

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// Each test has an environment of its own, which the in-process helpers give the
// Factory (Factory.Getenv): XDG_CONFIG_HOME is a fresh directory and nothing else is set
// unless the test sets it (setEnv). No test reads or changes the process environment,
// so they run in parallel. A subtest shares its parent's environment.
var testEnvs sync.Map // test name -> *testEnv

type testEnv struct {
	mu    sync.Mutex
	m     map[string]string
	empty map[string]bool // set to "" (setEnvEmpty), not unset
}

func (e *testEnv) get(k string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.m[k]
}

func (e *testEnv) lookup(k string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	v, ok := e.m[k]
	return v, (ok && v != "") || e.empty[k]
}

func envOf(t *testing.T) *testEnv {
	for name := t.Name(); ; {
		if e, ok := testEnvs.Load(name); ok {
			return e.(*testEnv)
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			break
		}
		name = name[:i]
	}
	e := &testEnv{m: map[string]string{"XDG_CONFIG_HOME": t.TempDir()}, empty: map[string]bool{}}
	name := t.Name()
	testEnvs.Store(name, e)
	t.Cleanup(func() { testEnvs.Delete(name) })
	return e
}

// setEnv sets k in the test's environment ("" unsets it, as for the Factory).
func setEnv(t *testing.T, k, v string) {
	e := envOf(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k] = v
	delete(e.empty, k)
}

// setEnvEmpty sets k to "" in the test's environment: set, and empty.
func setEnvEmpty(t *testing.T, k string) {
	e := envOf(t)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[k], e.empty[k] = "", true
}

// getEnv reads the test's environment.
func getEnv(t *testing.T, k string) string { return envOf(t).get(k) }

// newTestFactory is NewFactory over the test's environment.
func newTestFactory(t *testing.T, io *IOStreams, v VersionInfo) *Factory {
	f := NewFactory(io, v)
	f.Getenv, f.LookupEnv = envOf(t).get, envOf(t).lookup
	return f
}

// runEnv is run with env added to the test's environment.
func runEnv(t *testing.T, env map[string]string, url string, args ...string) result {
	t.Helper()
	for k, v := range env {
		setEnv(t, k, v)
	}
	return run(t, url, args...)
}

// testStreams are streams over buffers, as when piped: no TTY, no prompt.
func testStreams() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut, NoColor: true}, in, out, errOut
}
