package scan

// RecentKeys is how many keys a Recent remembers unless told.
const RecentKeys = 1 << 16

// Recent remembers the last Size (RecentKeys if 0) keys met, to meet each key once in
// bounded memory: a server's SCAN returns a key twice only when its table shrinks mid-scan,
// and then only keys it had just walked (a key whose Cluster slot moves may come later).
type Recent struct {
	Size int
	set  map[string]struct{}
	ring []string
	n    int
}

// First says key was not met among the last Size keys, and remembers it.
func (r *Recent) First(key string) bool {
	if _, dup := r.set[key]; dup {
		return false
	}
	if r.set == nil {
		if r.Size <= 0 {
			r.Size = RecentKeys
		}
		r.set, r.ring = map[string]struct{}{}, make([]string, r.Size)
	}
	i := r.n % r.Size
	if r.n >= r.Size {
		delete(r.set, r.ring[i])
	}
	r.ring[i], r.set[key] = key, struct{}{}
	r.n++
	return true
}
