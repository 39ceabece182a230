#!/usr/bin/env bash
# Compares the closed-loop throughput of `bucketctl load` with redis-benchmark running
# EVALSHA of the same script, at the same concurrency, against the same local redis-server,
# with --pipeline 1 and with 16 decisions per round trip (redis-benchmark -P 16).
#
# It starts its own redis-server on a free loopback port (no persistence), builds
# bucketctl, then runs the two tools in pairs (in turn, alternating which goes first, each
# on a fresh key), prints every pair and the medians, and cleans up.
#
# Both tools take the script's allowed branch: the bucket's capacity and rate are 1e15, so
# every decision is allowed. A hot key of capacity 10 would deny nearly everything instead;
# the script does the same work either way (it always writes the bucket back), but with an
# open bucket bucketctl's report proves every decision ran (allowed = requests).
#
# Client and server share this machine's cores: redis-server is single-threaded and
# redis-benchmark is one thread of C, while bucketctl runs Go workers; each tool competes
# with the server for CPU, so run it on an otherwise idle machine. On a virtual machine the
# host may take CPU time too (steal, in /proc/stat): a run it takes more than STEAL_MAX
# percent of the cores from measures the host, not the tool, so its pair is shown, marked
# and not counted, and pairs go on until REPS are counted or MAX_PAIRS were run. The figure
# is the median of the counted pairs' ratios: single pairs here range over 0.65-1.35 even
# without steal, so 21 are counted. The load average before and after is printed.
#
# With FLOOR=resp or FLOOR=go-redis, scripts/bench/loadfloor takes load's place: the same
# closed loop with nothing but the commands (hand-written RESP, or go-redis alone), what a
# Go client of this machine reaches against redis-benchmark.
#
# Usage: scripts/bench/load-vs-redis-benchmark.sh
# Environment: CONC (64), REPS (pairs counted, 21), MAX_PAIRS (4 x REPS), STEAL_MAX (3),
#              N1 (requests per run at -P 1, 50000), N16 (at -P 16, 100000),
#              FLOOR (unset, resp or go-redis), PS (the pipelines, "1 16"),
#              REDIS_SERVER, REDIS_BENCHMARK.
set -euo pipefail

CONC=${CONC:-64}
FLOOR=${FLOOR:-}
REPS=${REPS:-21}
MAX_PAIRS=${MAX_PAIRS:-$((4 * REPS))}
STEAL_MAX=${STEAL_MAX:-3}
N1=${N1:-50000}
N16=${N16:-100000}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
SPEC=1e15

BENCH=load-vs-redis-benchmark
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_BENCHMARK" redis-cli go

port=$(free_port)
start_redis "$port"

echo "building bucketctl…" >&2
(cd "$root" && go build -o "$tmp/bucketctl" . && go build -o "$tmp/loadfloor" ./scripts/bench/loadfloor)
# The script as bucketctl sends it (the shared prelude and token_bucket.lua).
sha=$(redis-cli -p "$port" SCRIPT LOAD "$("$tmp/bucketctl" script show)")

# rb P N KEY: requests per second of redis-benchmark's EVALSHA.
rb() {
	"$REDIS_BENCHMARK" -h 127.0.0.1 -p "$port" -c "$CONC" -n "$2" -P "$1" --csv \
		EVALSHA "$sha" 1 "$3" "$SPEC" "$SPEC" 1 | tail -n 1 | awk -F'","' '{ print $2 }'
}

# bl P N KEY: decisions per second of bucketctl load (and a check that all were allowed),
# or with FLOOR of scripts/bench/loadfloor -client $FLOOR in its place.
bl() {
	if [ -n "$FLOOR" ]; then
		"$tmp/loadfloor" -addr "127.0.0.1:$port" -client "$FLOOR" -sha "$sha" -c "$CONC" -P "$1" -n "$2" \
			"$3" "$SPEC" "$SPEC" 1 | awk '{ print $1 }'
		return
	fi
	local json
	json=$("$tmp/bucketctl" --url "redis://127.0.0.1:$port" load "$3" --capacity "$SPEC" --rate "$SPEC" \
		-c "$CONC" --pipeline "$1" -n "$2" -o json 2>/dev/null)
	local allowed
	allowed=$(printf '%s\n' "$json" | sed -n 's/^  "allowed": \([0-9]*\),$/\1/p')
	if [ "$allowed" != "$2" ]; then
		echo "load-vs-redis-benchmark: bucketctl allowed $allowed of $2 decisions" >&2
		exit 1
	fi
	printf '%s\n' "$json" | sed -n 's/^  "ops_per_sec": \([0-9.e+]*\),$/\1/p' | awk '{ printf "%.2f\n", $1 }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# steal prints the CPU time the host took from this machine so far, in clock ticks (0
# where /proc/stat has no steal column).
steal() { awk '/^cpu / { print ($9 == "" ? 0 : $9) }' /proc/stat 2>/dev/null || echo 0; }
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cores=$(nproc 2>/dev/null || echo 1)
now() { date +%s.%N; }

# timed VAR CMD...: runs CMD with its output in VAR, and the percentage of the cores'
# time the host took meanwhile in ${VAR}_steal.
timed() {
	local var=$1 t0 s0 out
	shift
	t0=$(now) s0=$(steal)
	out=$("$@")
	printf -v "$var" '%s' "$out"
	printf -v "${var}_steal" '%s' "$(awk -v d="$(($(steal) - s0))" -v w="$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')" \
		-v hz="$hz" -v n="$cores" 'BEGIN { printf "%.1f", 100 * d / (w * hz * n) }')"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
echo "redis-server $("$REDIS_SERVER" --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), $cores cores," \
	"concurrency $CONC, $N1 requests at -P 1, $N16 at -P 16; pairs with more than $STEAL_MAX% steal are not counted"
them="bucketctl load --pipeline"
[ -n "$FLOOR" ] && them="loadfloor -client $FLOOR -P"
printf '%-5s %-4s %16s %16s %7s %13s\n' pair P redis-benchmark "${them%% *}" ratio 'steal rb/bl'
for p in ${PS:-1 16}; do
	: >"$tmp/rb.$p"; : >"$tmp/bl.$p"; : >"$tmp/ratio.$p"; : >"$tmp/all.$p"
	n=$N1
	[ "$p" = 16 ] && n=$N16
	counted=0
	for pair in $(seq 1 "$MAX_PAIRS"); do
		[ "$counted" -ge "$REPS" ] && break
		if [ $((pair % 2)) = 1 ]; then
			timed r rb "$p" "$n" "rb:$pair:$p"
			timed b bl "$p" "$n" "bench-$pair-$p"
		else
			timed b bl "$p" "$n" "bench-$pair-$p"
			timed r rb "$p" "$n" "rb:$pair:$p"
		fi
		ratio=$(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.3f", b / r }')
		echo "$ratio" >>"$tmp/all.$p"
		mark=
		if awk -v a="$r_steal" -v c="$b_steal" -v m="$STEAL_MAX" 'BEGIN { exit !(a <= m && c <= m) }'; then
			counted=$((counted + 1))
			echo "$r" >>"$tmp/rb.$p"
			echo "$b" >>"$tmp/bl.$p"
			echo "$ratio" >>"$tmp/ratio.$p"
		else
			mark="  not counted: steal"
		fi
		printf '%-5s %-4s %16s %16s %7s %6s%%/%s%%%s\n' "$pair" "$p" "$r" "$b" "$ratio" "$r_steal" "$b_steal" "$mark"
	done
done
echo
echo "medians of the counted pairs (ops/s):"
for p in ${PS:-1 16}; do
	tried=$(wc -l <"$tmp/all.$p")
	counted=$(wc -l <"$tmp/ratio.$p")
	if [ "$counted" = 0 ]; then
		echo "load-vs-redis-benchmark: -P $p: the host took more than $STEAL_MAX% of the CPU in each of $tried pairs; run it when the host is quieter" >&2
		exit 1
	fi
	r=$(median <"$tmp/rb.$p")
	b=$(median <"$tmp/bl.$p")
	printf '  -P %-3s redis-benchmark %12s   %s %-3s %12s   ratio %s (median of the ratios of %s of %s pairs (%s wanted), those with steal ≤ %s%%; ratio of the medians %s; median of all pairs %s)\n' \
		"$p" "$r" "$them" "$p" "$b" "$(median <"$tmp/ratio.$p")" "$counted" "$tried" "$REPS" "$STEAL_MAX" \
		"$(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.3f", b / r }')" "$(median <"$tmp/all.$p")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
