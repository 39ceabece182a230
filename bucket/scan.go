package bucket

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Scan walks the keys matching pattern on every master with SCAN (never KEYS), COUNT count
// per page, and calls fn once per page with the page's bucket keys: the time key of a strings
// layout (KEY:last_time) is folded into its bucket KEY, and keys already seen are dropped.
// fn may stop the walk by returning an error, which Scan returns.
func (s *Store) Scan(ctx context.Context, pattern string, count int64, suffixes []string, fn func(keys []string) error) error {
	if count <= 0 {
		count = 500
	}
	if len(suffixes) == 0 {
		suffixes = TimeSuffixes(nil)
	}
	seen := map[string]struct{}{}
	return s.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		var cursor uint64
		for {
			keys, next, err := c.Scan(ctx, cursor, pattern, count).Result()
			if err != nil {
				s.networkErr(err)
				return err
			}
			page := keys[:0]
			for _, k := range keys {
				k = foldTimeKey(k, suffixes)
				if _, dup := seen[k]; dup {
					continue
				}
				seen[k] = struct{}{}
				page = append(page, k)
			}
			if len(page) > 0 {
				if err := fn(page); err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	})
}

func foldTimeKey(k string, suffixes []string) string {
	for _, s := range suffixes {
		if strings.HasSuffix(k, s) && len(k) > len(s) {
			return strings.TrimSuffix(k, s)
		}
	}
	return k
}

// TimeSuffixes lists the time-key suffixes of the strings layouts among the presets and
// the given custom layouts.
func TimeSuffixes(custom []Layout) []string {
	var out []string
	add := func(l Layout) {
		if l.Type != Strings || l.TimeSuffix == "" {
			return
		}
		for _, s := range out {
			if s == l.TimeSuffix {
				return
			}
		}
		out = append(out, l.TimeSuffix)
	}
	for _, n := range PresetNames() {
		add(Presets[n])
	}
	for _, l := range custom {
		add(l)
	}
	return out
}
