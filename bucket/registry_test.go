package bucket_test

import (
	"testing"
	"time"

	"github.com/bucketctl/bucketctl/bucket"
	"github.com/bucketctl/bucketctl/bucket/apptest"
)

// TestRegistryPresetsHaveOracles: every preset but the native one (whose oracle is the
// reference model) has a row in an oracle table: its owner's script in apptest.Apps, or its
// library in gcraOracles. The oracle tests iterate those tables, and detection the
// registry, so a preset added without its oracle fails here.
func TestRegistryPresetsHaveOracles(t *testing.T) {
	apps := map[string]bool{}
	for _, a := range apptest.Apps {
		if _, ok := bucket.Presets[a.Layout]; !ok {
			t.Errorf("apptest.Apps row %s names no preset", a.Layout)
		}
		apps[a.Layout] = true
	}
	for name := range gcraOracles {
		if bucket.Presets[name].Type != bucket.GCRA {
			t.Errorf("gcraOracles row %s names no GCRA preset", name)
		}
	}
	for _, l := range bucket.Registry() {
		if l.Native {
			continue
		}
		_, gcra := gcraOracles[l.Name]
		_, own := ownOracles[l.Name]
		if !apps[l.Name] && !gcra && !own {
			t.Errorf("preset %s has no oracle row: add its owner's script to apptest.Apps (or its library to gcraOracles)", l.Name)
		}
	}
}

// ownOracles are the presets proven by an oracle test of their own: the owner's module
// ported line by line, or its script with replies of its own shape.
var ownOracles = map[string]func(*testing.T){
	// Its tick arithmetic at the script's own ns clock (besides its apptest.Apps row).
	"go-redisstore":   TestGoRedisStoreOracle,
	"mennanov":        TestMennanovOracle,
	"mennanov-legacy": TestMennanovLegacyOracle,
	"redis-cell":      TestRedisCellOracle,
	"redis-gcra":      TestRedisGCRAOracle,
}

// TestRegistryPresetsDetected: detection tries every hash preset of the registry: a hash of
// exactly one's fields is read as that layout, a guess, with no rule naming it.
func TestRegistryPresetsDetected(t *testing.T) {
	now := time.Now().UnixMicro()
	for _, l := range bucket.Registry() {
		if l.Type != bucket.Hash || l.Native {
			continue
		}
		fields := map[string]string{l.TokensField: "5", l.TimeField: l.FormatTime(now)}
		s := bucket.ClassifyHash("app:1", fields, 60000, now, bucket.Target{})
		// (Presets sharing field names are told apart by their time's form, or not at all.)
		same := s.Layout.TokensField == l.TokensField && s.Layout.TimeField == l.TimeField
		if s.Problem != "" || !same || !s.Detected || s.Guess == "" {
			t.Errorf("a hash of %s's fields %v: layout %q, problem %q, guess %q; want a %s guess", l.Name, fields, s.Layout.Name, s.Problem, s.Guess, l.Name)
		}
	}
}
