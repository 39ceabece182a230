package slot_test

import (
	"fmt"

	"github.com/bucketctl/bucketctl/bucket/slot"
)

// Keys of one multi-tier decision must share a Cluster slot: give them one hash tag.
func ExampleOf() {
	fmt.Println(slot.Of("rl:{user42}:user") == slot.Of("rl:{user42}:global"))
	fmt.Println(slot.Of("rl:user42") == slot.Of("rl:global"))
	// Output:
	// true
	// false
}
