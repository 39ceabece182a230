// Package rules is the config file's table of rules (a Redis glob pattern to a layout, a
// spec and a cost) and the Redis glob itself, matched exactly as SCAN MATCH does.
package rules
