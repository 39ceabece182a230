// Package cost counts what an operation costs Redis: the commands sent and the round trips
// (one command, or one pipeline to one node, is one round trip). The counter rides in the
// context, so other users of the same client are not counted; Install puts the counting
// hook on a client's connections. The same Counter is the Store's count of what its reads
// send (bucket.Store.ReadCost): one counter of Redis cost.
package cost
