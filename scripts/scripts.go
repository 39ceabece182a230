package scripts

import (
	"embed"
	"io/fs"
	"sync"
)

// Prelude is the text every script of bucketctl's that reads stored numbers starts with
// (number.lua): the one number grammar on the Lua side, num(v), whose Go side is
// bucket.ParseNumber, and native(), the identity and ranges of a native bucket. Redis
// scripts cannot share code at run time, so the sources are assembled from it here.
//
//go:embed number.lua
var Prelude string

// PreludeCall makes the prelude's functions locals of a script that starts with Prelude
// (they are made on demand: see number.lua).
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

// The assembled sources are made on first use: concatenated at start-up they cost every
// run, version included, 33 KB of copies.

// TokenBucket is the native token-bucket script: one atomic take or peek per call.
// See the header of token_bucket.lua for its KEYS, ARGV and reply.
var TokenBucket = sync.OnceValue(func() string { return Prelude + tokenBucket })

// MultiBucket decides several native buckets (tiers such as user, endpoint and global) all or
// nothing in one atomic call. See the header of multi_bucket.lua for its KEYS, ARGV and reply.
var MultiBucket = sync.OnceValue(func() string { return Prelude + multiBucket })

// Reset sets a bucket of any layout to N tokens, or deletes it, refusing anything that is
// not an identified bucket. See the header of reset.lua.
var Reset = sync.OnceValue(func() string { return Prelude + reset })

// Read returns what one key holds (type, TTL, and its contents when they can be a bucket's)
// in one command, writing nothing. See the header of read.lua.
//
//go:embed read.lua
var Read string

// Apps are the other limiters' scripts, verbatim and never edited: third_party/apps/ for
// the seed articles, third_party/NAME/ with a licence and SOURCE note for the others. The
// demo's traffic and the tests' oracles run them.
//
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
