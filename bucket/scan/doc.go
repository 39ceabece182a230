// Package scan is the one keyspace scan: SCAN a page, read its keys in one pipelined round
// trip (bucket.Store.ReadScanned), hand the states on, drop the page. Client memory is
// bounded by the page whatever the keyspace's size, and every figure of the Redis cost is
// counted (Stats). States is the scan of list, inspect --match, reset --match and audit;
// a Scanner is resumable and reads ahead (pages); a Watchlist is top's view of a keyspace
// of any size at a bounded number of commands per refresh, and Live is top's data: a
// Watchlist within a budget per second, the buckets written now first (hot.Follower), the
// cost of each refresh. Keys walks key names only, for shell completion.
package scan
