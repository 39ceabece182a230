package bucket

// Queued is the number of Takes waiting for a lane of s (tests only).
func Queued(s *Store) int {
	if s.co == nil {
		return 0
	}
	s.co.mu.Lock()
	defer s.co.mu.Unlock()
	return len(s.co.queue)
}
