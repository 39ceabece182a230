// Package scripts holds bucketctl's Lua sources, embedded into the binary.
package scripts

import "embed"

// TokenBucket is the native token-bucket script: one atomic take or peek per call.
// See the header of token_bucket.lua for its KEYS, ARGV and reply.
//
//go:embed token_bucket.lua
var TokenBucket string

// MultiBucket decides several native buckets (tiers such as user, endpoint and global) all or
// nothing in one atomic call. See the header of multi_bucket.lua for its KEYS, ARGV and reply.
//
//go:embed multi_bucket.lua
var MultiBucket string

// Reset sets a bucket of any layout to N tokens, or deletes it, refusing keys of another
// type. See the header of reset.lua.
//
//go:embed reset.lua
var Reset string

// Read returns what one key holds (type, TTL, and its contents when they can be a bucket's)
// in one command, writing nothing. See the header of read.lua.
//
//go:embed read.lua
var Read string

// Apps are the token-bucket scripts of the applications whose layouts bucketctl reads, each
// as its article publishes it (apps/NAME.lua, NAME a layout preset: webman, go-bench, spring,
// multi-tier, express). The demo drives its traffic with them, and the tests use them as the
// oracle of what each application decides.
//
//go:embed apps/*.lua
var apps embed.FS

// App returns the script of the application behind layout name ("" when there is none).
func App(name string) string {
	b, err := apps.ReadFile("apps/" + name + ".lua")
	if err != nil {
		return ""
	}
	return string(b)
}
