# Shared set-up of the benchmark scripts, sourced, not run. Each script measures against its
# own redis-server processes on free loopback ports, with no persistence, stopped (and their
# scratch directory removed) when the script ends, however it ends.
#
# Set BENCH (the script's name, for messages) before sourcing. Provides: $root (the
# repository), $tmp (the scratch directory), need TOOL..., free_port, free_cluster_port,
# start_redis PORT [redis-server args...], start_server ($port, $url), cli ARGS... and
# build_keyspace PROGRAM.

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

# build_keyspace PROGRAM fills the server of start_server with the commands the awk PROGRAM
# prints (through redis-cli --pipe), then prints the number of keys. PROGRAM runs in awk's
# BEGIN, after srand(42), with n ($N_NATIVE native buckets), m ($N_OTHER_LAYOUT express
# buckets), a ($N_APP other keys) and now (the time in microseconds) set.
build_keyspace() {
	echo "building the keyspace: $N_NATIVE native buckets, $N_OTHER_LAYOUT express buckets, $N_APP other keys"
	awk -v n="$N_NATIVE" -v m="$N_OTHER_LAYOUT" -v a="$N_APP" -v now="$(($(date +%s) * 1000000))" \
		"BEGIN { srand(42); $1 }" >"$tmp/keyspace.txt"
	cli --pipe <"$tmp/keyspace.txt" >/dev/null
	rm -f "$tmp/keyspace.txt"
	echo "keys: $(cli dbsize)"
}
