// Package loopback is the rule the bench commands share for the server they load: a
// redis-server on this machine, never one reached over a network, with a client that does
// not retry (a bench counts what it sent).
package loopback
