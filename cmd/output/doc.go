// Package output prints what commands return: tables laid out by display width and
// streamed a page at a time, JSON, JSON lines and YAML, the JSON shapes of decisions and
// bucket states, colour, and the progress line on stderr. It knows nothing of flags or
// servers: a command hands it values and streams.
package output
