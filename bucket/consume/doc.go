// Package consume is the policy of one decision: check reads the bucket and decides as its
// application does, writing nothing; consume takes tokens with the native script.
package consume
