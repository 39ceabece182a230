// Package cost counts what an operation costs Redis: commands and round trips (a pipeline
// to one node is one). The counter rides in the context; Install hooks a client.
package cost
