// Package resetplan plans a reset: for each bucket read, the reset op it needs (or none),
// the tokens before and after as its application reads them, and the batches a bulk reset
// sends, with a tally of what they did. It prints nothing; bucketctl's reset command asks,
// prints and reports.
package resetplan
