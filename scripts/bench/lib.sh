# Shared set-up of the benchmark scripts, sourced, not run. Each script measures against its
# own redis-server processes on free loopback ports, with no persistence, stopped (and their
# scratch directory removed) when the script ends, however it ends.
#
# Set BENCH (the script's name, for messages) before sourcing. Provides: $root (the
# repository), $tmp (the scratch directory), need TOOL..., free_port, free_cluster_port,
# start_redis PORT [redis-server args...], start_server ($port, $url), cli ARGS... and
# build_native_keyspace [CAPACITY RATE].

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
REDIS_SERVER=${REDIS_SERVER:-redis-server}
REDIS_CLI=${REDIS_CLI:-redis-cli}

tmp=$(mktemp -d)
bench_pids=()
bench_cleanup() {
	for p in "${bench_pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap bench_cleanup EXIT INT TERM

# need exits with a message naming the first of the tools that is not installed.
need() {
	for tool in "$@"; do
		command -v "$tool" >/dev/null || { echo "$BENCH: $tool is not installed" >&2; exit 1; }
	done
}

# free_port prints a loopback port nothing listens on.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# free_cluster_port prints a port below 55535 free together with its cluster bus port
# (port + 10000), as a Cluster node needs.
free_cluster_port() {
	python3 -c '
import random, socket
while True:
    p = random.randint(20000, 55000)
    try:
        a, b = socket.socket(), socket.socket()
        a.bind(("127.0.0.1", p)); b.bind(("127.0.0.1", p + 10000))
        a.close(); b.close(); print(p); break
    except OSError:
        pass'
}

# start_redis starts a redis-server on PORT (extra arguments go to it) and waits until it
# answers PING; if it does not, the end of its log is shown and the script exits.
start_redis() {
	local port=$1; shift
	"$REDIS_SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" \
		--dbfilename "dump-$port.rdb" --logfile "$tmp/redis-$port.log" "$@" &
	bench_pids+=($!)
	for _ in $(seq 100); do "$REDIS_CLI" -p "$port" ping >/dev/null 2>&1 && return 0; sleep 0.05; done
	echo "$BENCH: redis-server on port $port did not start:" >&2
	tail -n 5 "$tmp/redis-$port.log" >&2 || true
	exit 1
}

# start_server starts a redis-server on a free loopback port and sets $port to it and $url
# to its URL; cli runs redis-cli against it.
start_server() {
	port=$(free_port)
	start_redis "$port"
	url="redis://127.0.0.1:$port"
}
cli() { "$REDIS_CLI" -p "$port" "$@"; }

# build_native_keyspace [CAPACITY RATE] fills the server of start_server (redis-cli --pipe,
# raw RESP) with $N_NATIVE native buckets rate:user:<i> (the tagged string the native script
# writes, with a TTL of an hour, so a long run finds them all; CAPACITY 10, RATE 1 unless given), $N_OTHER_LAYOUT express buckets
# ex:ip:<i>, ${N_MIX:-100000} other limiters' keys (webman and Spring Cloud Gateway pairs,
# Traefik and upstash hashes, native-hash buckets written before the tagged string, Kong
# counters) and $N_APP application keys (session hashes holding a tokens field, counters,
# queues, cached pages); then prints the number of keys.
build_native_keyspace() {
	echo "building the keyspace: $N_NATIVE native buckets, $N_OTHER_LAYOUT express buckets, ${N_MIX:-100000} other limiters' keys, $N_APP other keys"
	python3 - "$N_NATIVE" "$N_OTHER_LAYOUT" "${N_MIX:-100000}" "$N_APP" "${1:-10}" "${2:-1}" >"$tmp/keyspace.resp" <<'PY'
import random, struct, sys, time
n, m, mix, a = (int(x) for x in sys.argv[1:5])
cap, rate = float(sys.argv[5]), float(sys.argv[6])
random.seed(42)
now = int(time.time()) * 1000000
out = sys.stdout.buffer
def cmd(*args):
    args = [x if isinstance(x, bytes) else str(x).encode() for x in args]
    out.write(b"*%d\r\n" % len(args) + b"".join(b"$%d\r\n%s\r\n" % (len(x), x) for x in args))
def native(tokens, ts, capacity, rate, allowed, denied):  # bucket.EncodeNative's layout
    return (b"bucketctl:v1:\x00" + struct.pack("<dd", tokens, ts) + allowed.to_bytes(7, "little") +
            denied.to_bytes(7, "little") + struct.pack("<ddI", capacity, rate, 0))
for i in range(n):
    v = native(random.randrange(int(cap * 10) + 1) / 10, now - random.randrange(5000000),
               cap, rate, random.randrange(100), random.randrange(5))
    cmd("SET", "rate:user:%d" % i, v, "PX", 3600000)
for i in range(m):
    cmd("HSET", "ex:ip:%d" % i, "tokens", random.randrange(100), "last_refill", "%.3f" % (now / 1e6 - random.random() * 5))
uuid = "2f0a5f5e-1c4b-4e55-9d1a-0b6f7d1e2c3a"
for i in range(mix):
    k, s = i % 6, now / 1e6
    if k == 0:
        cmd("SET", "wm:api:%d" % i, random.randrange(60), "EX", 3600)
        cmd("SET", "wm:api:%d:last_time" % i, "%.4f" % s, "EX", 3600)
    elif k == 1:
        cmd("SETEX", "request_rate_limiter.{u%d}.tokens" % i, 2000, random.randrange(1000))
        cmd("SETEX", "request_rate_limiter.{u%d}.timestamp" % i, 2000, int(s))
    elif k == 2:
        cmd("HSET", "traefik:rl:%d@file" % i, "last", now, "tokens", random.randrange(50))
        cmd("EXPIRE", "traefik:rl:%d@file" % i, 3600)
    elif k == 3:
        cmd("HSET", "upstash:ratelimit:%d" % i, "refilledAt", now // 1000, "tokens", random.randrange(10))
        cmd("PEXPIRE", "upstash:ratelimit:%d" % i, 3600000)
    elif k == 4:
        cmd("HSET", "legacy:user:%d" % i, "tokens", random.randrange(10), "ts", now, "capacity", 10, "rate", 1, "allowed", 3, "denied", 0)
        cmd("PEXPIRE", "legacy:user:%d" % i, 3600000)
    else:
        cmd("SET", "ratelimit:%s:%s:%d:%d:hour" % (uuid, uuid, i, now // 3600000000 * 3600000), random.randrange(30), "EX", 3600)
for i in range(a):
    k = i % 4
    if k == 0:
        cmd("HSET", "session:%d" % i, "user_id", i, "tokens", i % 7, "ts", now // 1000, "email", "u%d@example.com" % i)
    elif k == 1:
        cmd("SET", "counter:%d" % i, i)
    elif k == 2:
        cmd("RPUSH", "queue:%d" % i, "job-%d" % i)
    else:
        cmd("SET", "cache:page:%d" % i, "<html>%d</html>" % i)
PY
	cli --pipe <"$tmp/keyspace.resp" >/dev/null
	rm -f "$tmp/keyspace.resp"
	echo "keys: $(cli dbsize)"
}
