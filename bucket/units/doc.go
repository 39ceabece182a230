// Package units parses values as people type them, for every flag and config value: what
// the views print reads back ("1,500/s", "0.4/h", "340k", "1m1s"). Errors give an example.
package units
