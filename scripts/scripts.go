package scripts

import (
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"io/fs"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Prelude (number.lua) starts every script that reads stored numbers.
//
//go:embed number.lua
var Prelude string

// PreludeCall makes the prelude's functions locals of a script that starts with Prelude.
const PreludeCall = "local num, native, refusal, tagged, ttl_ms, checked, clock, struct =\n" +
	"  prelude(TAG, TAG_LEN, NATIVE_LEN, MAX_TOKENS, MAX_TIME_US, MAX_COUNTER, MAX_REFILL_S)\n"

var (
	//go:embed token_bucket.lua
	tokenBucket string
	//go:embed multi_bucket.lua
	multiBucket string
	//go:embed reset.lua
	reset string
)

// TokenBucket is the native script (see the package documentation), assembled on first use.
var TokenBucket = sync.OnceValue(func() string { return Prelude + tokenBucket })

// MultiBucket decides several native buckets all or nothing.
var MultiBucket = sync.OnceValue(func() string { return Prelude + multiBucket })

// Reset sets a bucket of any layout to N tokens, or deletes it (see reset.lua).
var Reset = sync.OnceValue(func() string { return Prelude + reset })

// Read returns what one key holds (type, TTL, contents) in one command (see read.lua).
//
//go:embed read.lua
var Read string

//go:embed third_party/*/*.lua
var apps embed.FS

// App returns the script of the application behind layout name ("" when there is none).
func App(name string) string {
	for _, p := range []string{"third_party/apps/" + name + ".lua", "third_party/" + name + "/" + name + ".lua"} {
		if b, err := apps.ReadFile(p); err == nil {
			return string(b)
		}
	}
	files, _ := fs.Glob(apps, "third_party/"+name+"/*.lua")
	if name == "apps" || len(files) != 1 {
		return ""
	}
	b, _ := apps.ReadFile(files[0])
	return string(b)
}

// Named is one of bucketctl's scripts.
type Named struct{ Name, Src string }

// BySHA maps each of bucketctl's scripts' SHA1 (as EVALSHA names it) to the script.
var BySHA = sync.OnceValue(func() map[string]Named {
	m := map[string]Named{}
	for name, src := range map[string]string{"token_bucket": TokenBucket(), "reset": Reset(), "multi_bucket": MultiBucket(), "read": Read} {
		sum := sha1.Sum([]byte(src))
		m[hex.EncodeToString(sum[:])] = Named{name, src}
	}
	return m
})

// Lazy makes a script (and hashes it) on first use.
func Lazy(src func() string) func() *redis.Script {
	return sync.OnceValue(func() *redis.Script { return redis.NewScript(src()) })
}
