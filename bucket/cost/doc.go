// Package cost counts what an operation costs Redis: the commands sent and the round trips
// (one command, or one pipeline to one node, is one round trip). The counter rides in the
// context, so other users of the same client are not counted; Install puts the counting
// hook on a client's connections. It is the one count of Redis cost: a scan's figures
// (audit's commands and round trips), a top refresh's budget and the figures top shows.
package cost
