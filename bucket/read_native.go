package bucket

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// nativeCandidate: key may hold a native bucket (no layout declared, or a native one).
func nativeCandidate(t Target) bool { return t.Layout == nil || t.Layout.Native }

type nativeCmds struct {
	i    int
	get  *redis.StringCmd
	pttl *redis.DurationCmd
}

// readNative reads a page's candidates with TIME, GETRANGE and PTTL (cheaper than the read
// script) and fills b.reads for native values; the rest go to the script. ok false: the ACL
// refused them.
func (s *Store) readNative(ctx context.Context, c pipeliner, keys []string, targets []Target, b *readBuf) (now int64, rest []int, ok bool, err error) {
	timeCmd := redis.NewTimeCmd(ctx, "time")
	cmds, batch := b.native[:0], append(b.batch[:0], timeCmd)
	defer func() { // the pool keeps no command
		clear(cmds)
		clear(batch)
		b.native, b.batch = cmds[:0], batch[:0]
	}()
	for i, k := range keys {
		if !nativeCandidate(targets[i]) {
			rest = append(rest, i)
			continue
		}
		// One byte past a native value's length: a longer string is not one.
		key := any(k)
		nc := nativeCmds{i, redis.NewStringCmd(ctx, "getrange", key, 0, nativeLen), redis.NewDurationCmd(ctx, time.Millisecond, "pttl", key)}
		cmds, batch = append(cmds, nc), append(batch, nc.get, nc.pttl)
	}
	if len(cmds) == 0 {
		return 0, rest, true, nil
	}
	pipe := c.Pipeline()
	_ = pipe.BatchProcess(ctx, batch...)
	_, _ = pipe.Exec(ctx)
	if err = readErr(timeCmd, batch[1:]...); err != nil && !isPerCommand(err) {
		if redis.IsPermissionError(err) {
			return 0, nil, false, nil
		}
		s.networkErr(err)
		return 0, nil, false, err
	}
	now = s.serverNow(timeCmd)
	for _, nc := range cmds {
		v, gerr := nc.get.Result()
		ms, perr := nc.pttl.Val(), nc.pttl.Err()
		// PTTL -2: the key went between the two commands; the script reads it again.
		if gerr != nil || perr != nil || len(v) != nativeLen || !IsNativeValue(v) || ms == -2 {
			rest = append(rest, nc.i)
			continue
		}
		pt := int64(ms) // -1: no TTL (go-redis keeps it unscaled)
		if ms >= 0 {
			pt = ms.Milliseconds()
		}
		b.reads[nc.i] = keyRead{typ: "string", pttl: pt, size: int64(nativeLen), str: v, hasStr: true}
	}
	return now, rest, true, nil
}

// readPage fills reads, native buckets first when o.NativeFirst, and
// returns each read's server time. pairs nil: worked out here for the keys the script reads.
func (s *Store) readPage(ctx context.Context, c pipeliner, keys []string, targets []Target, pairs [][]pairKey, b *readBuf, o readOpts) ([]int64, error) {
	reads := b.reads
	nows := sized(&b.nows, len(keys))
	var rest []int
	native, refused := o.scanned && o.Most == 0 && o.NativeFirst, false
	if native {
		now, r, ok, err := s.readNative(ctx, c, keys, targets, b)
		if err != nil {
			return nil, err
		}
		for i := range nows {
			nows[i] = now
		}
		native, rest, refused = ok, r, !ok
	}
	if !native {
		rest = make([]int, len(keys))
		for i := range rest {
			rest[i] = i
		}
	}
	if len(rest) > 0 {
		rk, rp, rr := make([]string, len(rest)), make([][]pairKey, len(rest)), make([]keyRead, len(rest))
		for j, i := range rest {
			rk[j] = keys[i]
			if pairs != nil {
				rp[j] = pairs[i]
			} else {
				rp[j] = pairKeys(keys[i], targets[i], o.Pairs)
			}
		}
		now, err := s.readPipeline(ctx, c, rk, rp, rr, o.cluster)
		if err != nil {
			return nil, err
		}
		if o.cluster {
			if err := s.readCrossSlot(ctx, rk, rp, rr); err != nil {
				return nil, err
			}
		}
		for j, i := range rest {
			reads[i], nows[i] = rr[j], now
		}
	}
	if o.Native != nil && o.scanned && o.Most == 0 {
		nat := 0
		for i := range reads {
			if v := reads[i].str; len(v) == nativeLen && IsNativeValue(v) {
				nat++
			}
		}
		*o.Native = NativeRead{Mostly: 2*nat >= len(keys) && nat > 0, Refused: refused}
	}
	return nows, nil
}
