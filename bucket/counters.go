package bucket

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// CounterForm is how a counter or window limiter stores its count, and where that is read.
type CounterForm struct {
	Name, Limiter       string
	Pattern, Value, TTL string
	Source              string

	typ    string                // "string" (an integer) or "list"
	key    func() *regexp.Regexp // nil: any key
	fits   func(m []string, v int64, pttl time.Duration, now time.Time) bool
	prefix string // prefix and near: cheap tests checked before key
	near   func(key string) bool
}

// Generic says the form names no key of its own: such a key is only like its counter.
func (f CounterForm) Generic() bool { return f.key == nil }

func (f CounterForm) describe() string {
	if f.Generic() {
		return fmt.Sprintf("a count with a TTL and no time key, as a fixed-window counter keeps it (like %s: %s = %s)",
			f.Limiter, f.Pattern, f.Value)
	}
	return fmt.Sprintf("most likely %s (%s)", f.Limiter, f.Pattern)
}

// LookupCounter finds a counter form by name.
func LookupCounter(name string) (CounterForm, bool) {
	for _, f := range counterForms {
		if f.Name == name {
			return f, true
		}
	}
	return CounterForm{}, false
}

// counterInt says v is an integer as INCR writes it.
func counterInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 19 || d[0] == '0' && len(d) > 1 {
		return false
	}
	return tailIn(d, decDigits) == len(d)
}

const decDigits, hexDigits = "0123456789", "0123456789abcdef"

func tailIn(s, set string) int {
	n := 0
	for n < len(s) && strings.IndexByte(set, s[len(s)-1-n]) >= 0 {
		n++
	}
	return n
}

func counterOf(key, typ, value string, pttl time.Duration, now time.Time) (CounterForm, bool) {
	var v int64
	if typ == "string" {
		if !counterInt(value) {
			return CounterForm{}, false
		}
		v, _ = strconv.ParseInt(value, 10, 64)
	}
	for _, f := range counterForms {
		if f.typ != typ {
			continue
		}
		var m []string
		if f.key != nil {
			if !strings.HasPrefix(key, f.prefix) || f.near != nil && !f.near(key) {
				continue
			}
			if m = f.key().FindStringSubmatch(key); m == nil {
				continue
			}
		}
		if f.fits == nil || f.fits(m, v, pttl, now) {
			return f, true
		}
	}
	return CounterForm{}, false
}

// withCounter names in st.Problem the counter a key most likely is.
func withCounter(st State, typ, value string, why string) State {
	f, ok := counterOf(st.Key, typ, value, st.TTL, time.UnixMicro(st.Now))
	if !ok {
		return st
	}
	st.Counter = f.Name
	st.fail(NotBucket, "%s", f.describe())
	if why != "" {
		st.Problem += "; " + why
	}
	return st
}

func ttlWithin(pttl, most time.Duration) bool { return pttl > 0 && pttl <= most+time.Second }

func ttlSet(_ []string, _ int64, pttl time.Duration, _ time.Time) bool { return pttl > 0 }

func periodOf(name string, yearDays int) time.Duration {
	switch name {
	case "second":
		return time.Second
	case "minute":
		return time.Minute
	case "hour":
		return time.Hour
	case "day":
		return 24 * time.Hour
	case "month":
		return 30 * 24 * time.Hour
	case "year":
		return time.Duration(yearDays) * 24 * time.Hour
	}
	return 0
}

// loneLevelTTL says why a lone two-key level is not a bucket of l, and the PTTL bounds (ms).
func (l Layout) loneLevelTTL(spec Spec, pttl time.Duration) (why string, lo, hi int64) {
	m := l.Model()
	if m.NoTTLByDesign() {
		if pttl >= 0 {
			return fmt.Sprintf("%s never sets a TTL, and this key has one of %s (a counter with a TTL of its window is not a level)",
				l.Name, pttl.Round(time.Millisecond)), -1, -1
		}
		return "", -1, -1
	}
	most := m.ResetTTL(spec, spec.Wait(0, spec.Capacity)) + time.Second
	hi = most.Milliseconds()
	switch {
	case pttl < 0:
		return fmt.Sprintf("%s level always has a TTL; this key has none (a counter?)", an(l.Name)), 1, hi
	case pttl > most:
		return fmt.Sprintf("its TTL of %s outlasts any %s sets for this spec (%s)", pttl.Round(time.Second), l.Name, most), 1, hi
	}
	return "", 1, hi
}

var limitsKey = lazyRegexp(`^LIMITS:LIMITER/(?:.*/)?([0-9]+)/([0-9]+)/(second|minute|hour|day|month|year)$`)

// counterForms are the counter and window limiters production runs, specific forms first.
var counterForms = []CounterForm{
	{Name: "kong", Limiter: "Kong's rate-limiting counter",
		Pattern: "ratelimit:<route>:<service>:<id>:<date>:<period>", Value: "hits in the period (INCR)",
		TTL:    "EXPIRE of the period (1 s to 365 days) at the first hit",
		Source: "Kong/kong kong/plugins/rate-limiting/policies/init.lua (get_local_key, usage), expiration.lua",
		typ:    "string",
		prefix: "ratelimit:", key: lazyRegexp(`^ratelimit:[0-9a-f-]{36}:[0-9a-f-]{36}:.*:([0-9]{13}):(second|minute|hour|day|month|year)$`),
		fits: func(m []string, _ int64, pttl time.Duration, now time.Time) bool {
			return notAfter(m[1], time.Millisecond, now) && ttlWithin(pttl, periodOf(m[2], 365))
		}},
	{Name: "limits", Limiter: "limits' (Flask-Limiter's) fixed-window counter",
		Pattern: "LIMITS:LIMITER/<key>/<amount>/<multiples>/<granularity>", Value: "hits in the window (INCRBY)",
		TTL:    "EXPIRE of the window at the first hit",
		Source: "alisaifee/limits limits/limits.py (key_for), limits/storage/redis.py, lua_scripts/incr_expire.lua",
		typ:    "string",
		prefix: "LIMITS:LIMITER/", key: limitsKey,
		fits: limitsWindow(1)},
	{Name: "limits-sliding", Limiter: "limits' (Flask-Limiter's) sliding-window counter",
		Pattern: "LIMITS:{LIMITER/<key>/<amount>/<multiples>/<granularity>}, and /-1 for the previous window",
		Value:   "hits in the window (SET PX, INCRBY)", TTL: "PX of twice the window",
		Source: "alisaifee/limits limits/storage/redis.py (_current_window_key), lua_scripts/acquire_sliding_window.lua",
		typ:    "string",
		prefix: "LIMITS:{LIMITER/", key: lazyRegexp(`^LIMITS:\{LIMITER/(?:.*/)?([0-9]+)/([0-9]+)/(second|minute|hour|day|month|year)\}(?:/-1)?$`),
		fits: limitsWindow(2)},
	{Name: "limits-moving", Limiter: "limits' (Flask-Limiter's) moving-window log",
		Pattern: "LIMITS:LIMITER/<key>/<amount>/<multiples>/<granularity>", Value: "a list of hit times (LPUSH, LTRIM)",
		TTL:    "EXPIRE of the window at every hit",
		Source: "alisaifee/limits lua_scripts/acquire_moving_window.lua",
		typ:    "list",
		prefix: "LIMITS:LIMITER/", key: limitsKey,
		fits: limitsWindow(1)},
	{Name: "ulule", Limiter: "ulule/limiter's counter",
		Pattern: "limiter:<key>", Value: "hits in the period (INCRBY)", TTL: "PEXPIRE of the period at the first hit",
		Source: "ulule/limiter drivers/store/redis/store.go (luaIncrScript, getCacheKey), defaults.go",
		typ:    "string", prefix: "limiter:", key: lazyRegexp(`^limiter:.`), fits: ttlSet},
	{Name: "rate-limiter-flexible", Limiter: "rate-limiter-flexible's RateLimiterRedis counter",
		Pattern: "rlflx:<key>", Value: "points consumed in the duration (INCRBY)", TTL: "EX of the duration (none for duration 0)",
		Source: "animir/node-rate-limiter-flexible lib/RateLimiterRedis.js (incrTtlLuaScript), lib/RateLimiterAbstract.js (getKey)",
		typ:    "string", prefix: "rlflx:", key: lazyRegexp(`^rlflx:.`)},
	{Name: "laravel-timer", Limiter: "Laravel's RateLimiter timer",
		Pattern: "<prefix><key>:timer", Value: "the Unix second the limit lifts (availableAt)", TTL: "EX of the decay",
		Source: "laravel/framework src/Illuminate/Cache/RateLimiter.php (increment), Cache/LuaScripts.php (add)",
		typ:    "string", near: func(k string) bool { return strings.HasSuffix(k, ":timer") }, key: lazyRegexp(`.:timer$`),
		fits: func(_ []string, v int64, pttl time.Duration, now time.Time) bool {
			left := time.Duration(v-now.Unix()) * time.Second
			return pttl > 0 && left > pttl-2*time.Second && left <= pttl+time.Second
		}},
	{Name: "laravel", Limiter: "Laravel's RateLimiter (throttle middleware) counter",
		Pattern: "<app>-database-<app>-cache-<md5 or sha1 of the key>", Value: "hits in the decay (INCRBY)",
		TTL:    "EX of the decay at the first hit",
		Source: "laravel/framework src/Illuminate/Cache/RateLimiter.php, Routing/Middleware/ThrottleRequests.php, config/cache.php",
		typ:    "string", near: func(k string) bool { return tailIn(k, hexDigits) >= 32 }, key: lazyRegexp(`cache[-_](?:[0-9a-f]{32}|[0-9a-f]{40})$`), fits: ttlSet},
	{Name: "envoy", Limiter: "envoy ratelimit's fixed-window counter",
		Pattern: "<prefix><domain>_<key>_<value>_..._<window start, Unix s>", Value: "hits in the window (INCRBY)",
		TTL:    "EXPIRE of the unit plus up to EXPIRATION_JITTER_MAX_SECONDS",
		Source: "envoyproxy/ratelimit src/limiter/cache_key.go (GenerateCacheKey), src/redis/fixed_cache_impl.go",
		typ:    "string", near: func(k string) bool { return tailIn(k, decDigits) == 10 && len(k) > 10 && k[len(k)-11] == '_' }, key: lazyRegexp(`^.+_.+_.*_([0-9]{10})$`),
		fits: func(m []string, _ int64, pttl time.Duration, now time.Time) bool {
			return notAfter(m[1], time.Second, now) && pttl > 0
		}},
	{Name: "go-zero", Limiter: "go-zero's PeriodLimit",
		Pattern: "<keyPrefix><key>", Value: "hits in the period (INCRBY)", TTL: "EXPIRE of the period at the first hit",
		Source: "zeromicro/go-zero core/limit/periodlimit.go, core/limit/periodscript.lua",
		typ:    "string", fits: ttlSet},
}

func notAfter(digits string, unit time.Duration, now time.Time) bool {
	n, err := strconv.ParseInt(digits, 10, 64)
	return err == nil && time.Duration(n)*unit <= time.Duration(now.UnixNano())+time.Second
}

func limitsWindow(n int) func(m []string, _ int64, pttl time.Duration, _ time.Time) bool {
	return func(m []string, _ int64, pttl time.Duration, _ time.Time) bool {
		mult, err := strconv.ParseInt(m[2], 10, 32)
		return err == nil && ttlWithin(pttl, time.Duration(n)*time.Duration(mult)*periodOf(m[3], 360))
	}
}
