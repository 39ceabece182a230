// Package units is the grammar of values as people type them, one parser per kind, used by
// every flag and config value: what the views print reads back ("1,500/s", "0.4/h", "340k",
// "1m1s"). The number inside is the one number grammar (bucket.ParseNumber). Errors are in
// the user's words, with an example of a valid value; none quotes Go.
package units
