// Package iostreams is where a command reads and writes: stdin, stdout and stderr, whether
// each is a terminal, whether colour is wanted, and the prompt.
package iostreams
