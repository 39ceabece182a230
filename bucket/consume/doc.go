// Package consume is the policy of a single decision, as bucketctl's consume and check make
// it: check reads the bucket and decides the way its application does, writing nothing;
// consume takes tokens with the native script, except when the cost is above a known
// capacity (denied without a write, as the script itself would).
package consume
