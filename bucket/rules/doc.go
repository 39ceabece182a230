// Package rules is the config file's table of rules (a Redis glob pattern to a layout, a
// spec and a cost; the first match wins) and the Redis glob itself: GlobMatch matches a key
// exactly as SCAN MATCH does, QuoteGlob escapes a literal prefix.
package rules
