#!/usr/bin/env bash
# Server cost per decision as instructions, side by side: bucketctl's Take (the Store as
# shipped, and without coalescing) against go-redis/redis_rate's Allow, on one redis-server
# run under valgrind's callgrind. Instruction counts move far less with the machine's load
# than times do (only through the mix of allows and denies, which follows how fast the run
# goes: compare rows of one run), so this is the figure to compare changes of the script by;
# BenchmarkServerCost gives the same comparison in server microseconds (INFO commandstats),
# which a busy machine blurs.
#
# The last row is scripts/bench/decisions/floor.lua: a decision on the native layout with
# every check taken out (GET, TIME, SET PX of the packed value), the
# least that layout's decision can cost, beside redis_rate's.
#
# Same work for each: 8 callers, 10,000 decisions over 100 keys, allows only (a limit never
# reached) and denies only (1 token an hour, drained by a warm-up that loads the scripts and
# writes every key once).
# The count covers everything the server does for those decisions: reading and parsing the
# commands, the script, its Redis calls, the replies.
#
# Usage: scripts/bench/servercost-callgrind.sh
# Environment: DECISIONS (10000), WORKERS (8), KEYS (100), REDIS_SERVER.
set -euo pipefail

DECISIONS=${DECISIONS:-10000}
WORKERS=${WORKERS:-8}
KEYS=${KEYS:-100}

BENCH=servercost-callgrind
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" valgrind callgrind_control go

(cd "$root" && go build -o "$tmp/decisions" ./scripts/bench/decisions)

# count IMPL [flags...] prints the server's instructions per decision for one run.
count() {
	local port out pid ir
	port=$(free_port)
	out="$tmp/callgrind.$port"
	valgrind --tool=callgrind --callgrind-out-file="$out" "$REDIS_SERVER" --port "$port" \
		--bind 127.0.0.1 --save '' --appendonly no --dir "$tmp" --logfile "$tmp/redis-$port.log" \
		>"$tmp/valgrind-$port.log" 2>&1 &
	pid=$!
	bench_pids+=("$pid")
	for _ in $(seq 600); do "$REDIS_CLI" -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
	coproc DRIVER { "$tmp/decisions" -addr "127.0.0.1:$port" -decisions "$DECISIONS" \
		-workers "$WORKERS" -keys "$KEYS" "$@"; }
	local line
	read -r line <&"${DRIVER[0]}"
	[ "$line" = ready ] || { echo "$BENCH: the driver did not start" >&2; exit 1; }
	callgrind_control -z "$pid" >/dev/null 2>&1
	echo go >&"${DRIVER[1]}"
	wait "$DRIVER_PID"
	callgrind_control -d "$pid" >/dev/null 2>&1
	ir=$(awk '/^summary:/ {print $2}' "$out".1)
	"$REDIS_CLI" -p "$port" shutdown nosave >/dev/null 2>&1 || true
	wait "$pid" 2>/dev/null || true
	echo $((ir / DECISIONS))
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo "server instructions per decision (callgrind), $WORKERS callers, $DECISIONS decisions over $KEYS keys:"
for w in allow deny; do
	rr=$(count -impl redis_rate -workload "$w")
	ours=$(count -impl bucketctl -workload "$w")
	alone=$(count -impl bucketctl -lanes 0 -workload "$w")
	floor=$(count -impl floor -workload "$w")
	if [ "$w" = allow ]; then echo " allows only:"; else echo " denies only:"; fi
	printf '  %-34s %8d\n' "redis_rate Allow" "$rr"
	printf '  %-34s %8d  %s\n' "bucketctl Take (as shipped)" "$ours" "$(ratio "$ours" "$rr")"
	printf '  %-34s %8d  %s\n' "bucketctl Take (each call alone)" "$alone" "$(ratio "$alone" "$rr")"
	printf '  %-34s %8d  %s\n' "the native layout, no check (alone)" "$floor" "$(ratio "$floor" "$rr")"
done
