package scripts

import (
	"crypto/sha1"
	"encoding/hex"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Named is one of bucketctl's scripts.
type Named struct{ Name, Src string }

// BySHA maps each of bucketctl's scripts' SHA1 (as EVALSHA names it) to the script.
var BySHA = sync.OnceValue(func() map[string]Named {
	m := map[string]Named{}
	for name, src := range map[string]string{"token_bucket": TokenBucket(), "reset": Reset(), "multi_bucket": MultiBucket(), "read": Read} {
		sum := sha1.Sum([]byte(src))
		m[hex.EncodeToString(sum[:])] = Named{name, src}
	}
	return m
})

// Lazy makes a script (and hashes it) on first use.
func Lazy(src func() string) func() *redis.Script {
	return sync.OnceValue(func() *redis.Script { return redis.NewScript(src()) })
}
