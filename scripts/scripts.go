// Package scripts holds bucketctl's Lua sources, embedded into the binary.
package scripts

import _ "embed"

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
