package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bucketctl/bucketctl/scripts"
)

// Client is the go-redis surface the Store needs. *redis.Client (standalone and Sentinel
// failover), *redis.ClusterClient and *redis.Ring all satisfy it.
//
// Configure the client with MaxRetries: -1 for decisions: go-redis otherwise re-sends a
// command after a dropped connection, and a consume the server already applied would be
// applied twice. The Store itself retries only on NOSCRIPT, which proves nothing ran.
type Client = redis.UniversalClient

// Store runs bucket decisions and reads against Redis. It is safe for concurrent use, and
// concurrent decisions (Take, TakeAll) share round trips: see WithCoalescing.
type Store struct {
	rdb    Client
	script *redis.Script
	now    func() time.Time // nil: Redis server TIME
	grace  string
	args   atomic.Pointer[argsEntry]
	co     *coalescer // nil: every Take is its own round trip

	readMode atomic.Int32 // how reads send the read script (read.go)
	readCost ReadCost     // what reads sent (atomic)
}

// Option configures a Store.
type Option func(*Store)

// WithClientClock makes the script use the caller's clock instead of Redis TIME, for
// managed servers that reject TIME in scripts and for deterministic tests. Keep the
// callers' clocks in sync: the script never moves a bucket's time backwards, but a fast
// clock refills early.
func WithClientClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithTTLGrace sets how long a bucket is kept after it would be full again (default 60 s).
// A missing bucket starts full, so expiry after that is lossless but for the counters.
func WithTTLGrace(d time.Duration) Option {
	return func(s *Store) { s.grace = strconv.FormatInt(d.Milliseconds(), 10) }
}

// NewStore returns a Store over rdb.
func NewStore(rdb Client, opts ...Option) *Store {
	s := &Store{rdb: rdb, script: nativeScript, co: &coalescer{lanes: DefaultLanes}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Redis returns the underlying client.
func (s *Store) Redis() Client { return s.rdb }

// SHA is the SHA1 of the native script, as EVALSHA knows it.
func (s *Store) SHA() string { return s.script.Hash() }

// argsEntry caches the boxed ARGV of the last spec and cost used: the hot path of a load
// test or a busy application passes the same spec every time and allocates nothing for it.
type argsEntry struct {
	spec Spec
	cost float64
	args []interface{}
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (s *Store) argv(spec Spec, cost float64, peek bool) []interface{} {
	if !peek && s.now == nil {
		if e := s.args.Load(); e != nil && e.spec == spec && e.cost == cost {
			return e.args
		}
	}
	var capS, rateS string
	if !spec.IsZero() {
		capS, rateS = fmtFloat(spec.Capacity), fmtFloat(spec.Rate)
	}
	args := []interface{}{capS, rateS, fmtFloat(cost)}
	if s.now != nil || peek || s.grace != "" {
		now := ""
		if s.now != nil {
			now = strconv.FormatInt(s.now().UnixMicro(), 10)
		}
		mode := "take"
		if peek {
			mode = "peek"
		}
		args = append(args, now, mode, s.grace)
	}
	if !peek && s.now == nil {
		s.args.Store(&argsEntry{spec: spec, cost: cost, args: args})
	}
	return args
}

func (s *Store) check(key string, spec Spec, cost float64) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if !spec.IsZero() {
		if err := spec.Validate(); err != nil {
			return err
		}
	}
	return spec.ValidateCost(cost)
}

// Take consumes cost tokens from the bucket at key if it holds them, atomically: one
// EVALSHA, in a round trip of its own or shared with concurrent decisions (WithCoalescing).
// A zero spec takes the capacity and rate stored in the bucket.
func (s *Store) Take(ctx context.Context, key string, spec Spec, cost float64) (Result, error) {
	if err := s.check(key, spec, cost); err != nil {
		return Result{}, err
	}
	v, err := s.run(ctx, s.script, key, nil, s.argv(spec, cost, false))
	if err != nil {
		return Result{}, s.decisionErr(key, err, func(err error) error { return scriptErr(key, err) })
	}
	return parseResult(v, spec)
}

var nativeScript = redis.NewScript(scripts.TokenBucket)

// runOnce runs a writing script as redis.Script.Run does (EVALSHA, then EVAL on NOSCRIPT,
// which proves nothing ran), but has go-redis send each of the two commands at most once.
//
// MaxRetries: -1 alone does not ensure that. A ClusterClient runs its own retry loop around
// its node clients (process and the pipeline paths in go-redis's osscluster.go), bounded by
// MaxRedirects, not MaxRetries: after io.EOF, a reset connection or a read timeout it sends
// the command again, to the same node first, so a consume the server applied before its
// reply was lost would be applied again and reported once. A command whose NoRetry() is
// true leaves that loop with the error, while MOVED and ASK redirects (the node does not
// serve the slot, so the script did not run there) and READONLY replies are still followed.
// Standalone and Sentinel clients built with MaxRetries: -1 make one attempt anyway.
func runOnce(ctx context.Context, c Client, sc *redis.Script, keys []string, args []interface{}) *redis.Cmd {
	cmd := evalCmd(ctx, "evalsha", sc.Hash(), keys, args)
	_ = c.Process(ctx, noResend{cmd})
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = evalCmd(ctx, "eval", knownScripts()[sc.Hash()].src, keys, args)
		_ = c.Process(ctx, noResend{cmd})
	}
	return cmd
}

func evalCmd(ctx context.Context, name, script string, keys []string, args []interface{}) *redis.Cmd {
	a := make([]interface{}, 3+len(keys), 3+len(keys)+len(args))
	a[0], a[1], a[2] = name, script, len(keys)
	for i, k := range keys {
		a[3+i] = k
	}
	return redis.NewCmd(ctx, append(a, args...)...)
}

// noResend wraps a command that go-redis must not send again after a failure that may have
// come after the server ran it (see runOnce). It works in pipelines too: a ClusterClient
// does not retry a pipeline holding such a command.
type noResend struct{ *redis.Cmd }

// NoRetry tells go-redis not to re-send the command.
func (noResend) NoRetry() bool { return true }

// UncertainError is a decision that was sent and got no reply: a timeout, or a connection
// lost after the command left. The server may or may not have applied it. It is not
// re-sent, since re-sending could apply it twice.
type UncertainError struct {
	Key string
	Err error
}

func (e *UncertainError) Error() string {
	return fmt.Sprintf("no reply for %q (%v): the decision may or may not have been applied, and it is not re-sent", e.Key, e.Err)
}

func (e *UncertainError) Unwrap() error { return e.Err }

// decisionErr classifies the error of a decision: an error after the command was written
// to a connection (no reply in time, a connection lost while waiting) becomes an
// UncertainError; a reply error, or a failure before anything was written (see notSent),
// goes through replyErr.
func (s *Store) decisionErr(key string, err error, replyErr func(error) error) error {
	if errors.Is(err, ErrNotSent) || errors.As(err, new(*UncertainError)) {
		return err // from the coalescer, final
	}
	s.networkErr(err)
	if !isNetwork(err) || notSent(err) {
		return replyErr(err)
	}
	return &UncertainError{Key: key, Err: err}
}

// notSent reports whether a network error came before the command was written to a
// connection, so the server cannot have run it: a failed dial (refused, unresolvable,
// timed out), a pool that could give no connection, or the context ending
// while go-redis waited for one. go-redis returns the context's own error only from its
// pool: once a command is written, a deadline surfaces as a read or write timeout of
// the connection (a *net.OpError), which stays uncertain.
func notSent(err error) bool {
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op == "dial"
	}
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, redis.ErrClosed):
		return true
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return true
	}
	return false
}

// networkErr asks a Cluster client to refresh its slot map after a network error: the
// node may have failed, and go-redis otherwise learns of its replacement only from a
// MOVED reply (which a dead node never sends) or its periodic reload (every 60 s).
func (s *Store) networkErr(err error) {
	if c, ok := s.rdb.(*redis.ClusterClient); ok && isNetwork(err) {
		c.ReloadState(context.Background())
	}
}

// IsUnreachable reports whether err means Redis could not be reached or would not let the
// client in: a network error, a refused or timed-out connection, a closed client, a TLS
// failure or a refused password (WRONGPASS, NOAUTH), as opposed to an error reply to a
// command. The CLI exits 3 on these and the live views show "Redis unreachable".
func IsUnreachable(err error) bool {
	if err == nil {
		return false
	}
	if isNetwork(err) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"WRONGPASS", "NOAUTH", "tls:", "x509:", "connection pool timeout", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func isNetwork(err error) bool {
	var ne net.Error
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ne))
}

// Peek computes the decision Take would make without writing anything: it runs the script
// with EVALSHA_RO (Redis >= 7), falling back to plain EVALSHA on older servers, where the
// script's peek mode still writes nothing.
func (s *Store) Peek(ctx context.Context, key string, spec Spec, cost float64) (Result, error) {
	if err := s.check(key, spec, cost); err != nil {
		return Result{}, err
	}
	keys := []string{key}
	args := s.argv(spec, cost, true)
	v, err := s.script.RunRO(ctx, s.rdb, keys, args...).Slice()
	if err != nil && isUnknownCommand(err) {
		v, err = s.script.Run(ctx, s.rdb, keys, args...).Slice()
	}
	if err != nil {
		s.networkErr(err)
		return Result{}, scriptErr(key, err)
	}
	return parseResult(v, spec)
}

// ACLDenial is what a server's ACL refused: a command sent directly (a NOPERM reply), or a
// command one of bucketctl's scripts calls, since ACLs apply inside scripts too.
type ACLDenial struct {
	// Command is the refused command in lower case ("evalsha", "hset", "script|load"), or
	// "" when the command was allowed but not on its keys.
	Command string
	// InScript says a script called Command; Script names it when it is one of
	// bucketctl's ("token_bucket", "reset", "multi_bucket").
	InScript bool
	Script   string
}

var (
	quotedCommand = regexp.MustCompile(`'([^' ]+)' command`)
	scriptLine    = regexp.MustCompile(`script: ([0-9a-f]{40}), on @user_script:(\d+)`)
	luaCall       = regexp.MustCompile(`redis\.p?call\(\s*'([A-Za-z]+)'`)
)

// Denied reports whether err is a refusal by the server's ACL, and what was refused.
// Redis 7.0 names the command of a refused script call only by its line, which is read
// from the script's source.
func Denied(err error) (ACLDenial, bool) {
	if err == nil {
		return ACLDenial{}, false
	}
	msg := err.Error()
	d := ACLDenial{InScript: strings.Contains(msg, "The user executing the script") || strings.Contains(msg, "ACL failure in script")}
	if !d.InScript && !redis.IsPermissionError(err) {
		return d, false
	}
	if m := quotedCommand.FindStringSubmatch(msg); m != nil {
		d.Command = strings.ToLower(m[1])
	}
	refusedCommand := d.InScript && strings.Contains(msg, "run this command") // not its keys
	if m := scriptLine.FindStringSubmatch(msg); d.InScript && m != nil {
		sc, known := knownScripts()[m[1]]
		d.Script = sc.name
		if known && refusedCommand && d.Command == "" {
			d.Command = commandAt(sc.src, m[2])
		}
	}
	if refusedCommand && d.Command == "" {
		d.Command = "a command"
	}
	return d, true
}

// commandAt returns the command that line n of a script's source calls, or "".
func commandAt(src, n string) string {
	lines := strings.Split(src, "\n")
	i, _ := strconv.Atoi(n)
	if i < 1 || i > len(lines) {
		return ""
	}
	if c := luaCall.FindStringSubmatch(lines[i-1]); c != nil {
		return strings.ToLower(c[1])
	}
	return ""
}

type namedScript struct{ name, src string }

// knownScripts maps the SHA1 of each of bucketctl's scripts to its name and source: for
// ACL messages, and for EVAL or SCRIPT LOAD after NOSCRIPT.
var knownScripts = sync.OnceValue(func() map[string]namedScript {
	m := map[string]namedScript{}
	for name, src := range map[string]string{"token_bucket": scripts.TokenBucket, "reset": scripts.Reset, "multi_bucket": scripts.MultiBucket, "read": scripts.Read} {
		m[redis.NewScript(src).Hash()] = namedScript{name, src}
	}
	return m
})

func isUnknownCommand(err error) bool {
	return err != nil && strings.Contains(strings.ToLower(err.Error()), "unknown command")
}

// ErrWrongType is returned for a key that holds something other than a bucket.
var ErrWrongType = errors.New("key holds another Redis type")

// ErrForeign is returned when the native script meets a bucket of another layout.
var ErrForeign = errors.New("not a native bucket")

// ErrNoSpec is returned when neither the caller nor the bucket gives capacity and rate.
var ErrNoSpec = errors.New("no capacity/rate known for this bucket")

func scriptErr(key string, err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "WRONGTYPE"):
		return fmt.Errorf("%w: %q is not a bucket", ErrWrongType, key)
	case strings.Contains(msg, "bucketctl: not a native bucket"):
		return fmt.Errorf("%w: %q is another application's bucket, not a native one: consume and load work on native buckets only; use inspect, check or reset", ErrForeign, key)
	case strings.Contains(msg, "bucketctl: no capacity/rate"):
		return fmt.Errorf("%w: %q: pass --capacity and --rate", ErrNoSpec, key)
	case strings.Contains(msg, "ERR bucketctl:"):
		return fmt.Errorf("%w: %s", ErrInvalid, strings.TrimPrefix(msg[strings.Index(msg, "bucketctl:"):], "bucketctl: "))
	}
	return err
}

func parseResult(v []interface{}, spec Spec) (Result, error) {
	if len(v) < 4 {
		return Result{}, fmt.Errorf("unexpected script reply %v", v)
	}
	allowed, _ := v[0].(int64)
	rem, _ := v[1].(string)
	retry, _ := v[2].(int64)
	reset, _ := v[3].(int64)
	r := Result{Allowed: allowed == 1, Spec: spec,
		RetryAfter: time.Duration(retry) * time.Microsecond, ResetAfter: time.Duration(reset) * time.Microsecond}
	if retry < 0 {
		r.RetryAfter = -1
	}
	var err error
	if r.Remaining, err = strconv.ParseFloat(rem, 64); err != nil {
		return Result{}, fmt.Errorf("unexpected tokens %q in script reply", rem)
	}
	if len(v) >= 6 {
		c, _ := v[4].(string)
		rt, _ := v[5].(string)
		r.Spec.Capacity, _ = strconv.ParseFloat(c, 64)
		r.Spec.Rate, _ = strconv.ParseFloat(rt, 64)
	}
	return r, nil
}

// LoadScript loads the native scripts (single and multi-tier) on every master (one for a standalone or Sentinel
// client) and returns the addresses it loaded on.
func (s *Store) LoadScript(ctx context.Context) (sha string, nodes []string, err error) {
	src := scripts.TokenBucket
	load := func(ctx context.Context, c *redis.Client) error {
		got, err := c.ScriptLoad(ctx, src).Result()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		if got != s.SHA() {
			return fmt.Errorf("%s: script SHA %s, want %s", c.Options().Addr, got, s.SHA())
		}
		// The multi-tier script too, so TakeAll never pays for a NOSCRIPT round trip.
		if err := c.ScriptLoad(ctx, scripts.MultiBucket).Err(); err != nil {
			return fmt.Errorf("%s: %w", c.Options().Addr, err)
		}
		nodes = append(nodes, c.Options().Addr)
		return nil
	}
	err = s.ForEachMaster(ctx, load)
	return s.SHA(), nodes, err
}

// ForEachMaster calls fn for every master: each master of a Cluster, each shard of a Ring,
// or the one server of a standalone or Sentinel client. Calls are made one at a time, in
// the order of the masters' addresses.
func (s *Store) ForEachMaster(ctx context.Context, fn func(context.Context, *redis.Client) error) error {
	// go-redis calls the callback of ForEachMaster and ForEachShard concurrently.
	var (
		mu      sync.Mutex
		clients []*redis.Client
	)
	collect := func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		clients = append(clients, m)
		return nil
	}
	var err error
	switch c := s.rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(ctx, collect)
	case *redis.Ring:
		err = c.ForEachShard(ctx, collect)
	case *redis.Client:
		return fn(ctx, c)
	default:
		return fmt.Errorf("unsupported client type %T", s.rdb)
	}
	if err != nil {
		s.networkErr(err)
		return err
	}
	sort.Slice(clients, func(i, j int) bool { return clients[i].Options().Addr < clients[j].Options().Addr })
	return forEach(ctx, clients, fn)
}

func forEach(ctx context.Context, clients []*redis.Client, fn func(context.Context, *redis.Client) error) error {
	var errs []error
	for _, c := range clients {
		if err := fn(ctx, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
