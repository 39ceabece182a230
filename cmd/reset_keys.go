package cmd

import (
	"fmt"

	"github.com/bucketctl/bucketctl/bucket"
)

// What a reset of keys named on the command line says about the keys it cannot reset.

// missing is exit 6 for keys named that do not exist (a refill has nothing to do there),
// unless --ignore-missing. --tokens creates them: they are not missing then.
func (r *resetter) missing(states []bucket.State) error {
	if r.opts.IgnoreMissing || r.setTokens {
		return nil
	}
	return missingErr(states)
}

// notBuckets says why a reset of named keys wrote nothing: n of them are not buckets.
func notBuckets(n, of int) string {
	if n == of {
		return fmt.Sprintf("none of the %s keys is a bucket", fmtCount(of))
	}
	if n == 1 {
		return fmt.Sprintf("1 of %s keys is not a bucket; leave it out and run again", fmtCount(of))
	}
	return fmt.Sprintf("%s of %s keys are not buckets; leave them out and run again", fmtCount(n), fmtCount(of))
}
