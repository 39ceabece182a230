#!/usr/bin/env bash
# Compares the closed-loop throughput of `bucketctl load` with redis-benchmark running
# EVALSHA of the same script, at the same concurrency, against the same local redis-server,
# with --pipeline 1 and with 16 decisions per round trip (redis-benchmark -P 16).
#
# It starts its own redis-server on a free loopback port (no persistence), builds
# bucketctl, then runs the two tools in turn REPS times (interleaved, alternating which
# goes first, each on a fresh key), prints every run and the medians, and cleans up.
#
# Both tools take the script's allowed branch: the bucket's capacity and rate are 1e15, so
# every decision is allowed. A hot key of capacity 10 would deny nearly everything instead;
# the script does the same work either way (it always writes the bucket back), but with an
# open bucket bucketctl's report proves every decision ran (allowed = requests).
#
# Client and server share this machine's cores: redis-server is single-threaded and
# redis-benchmark is one thread of C, while bucketctl runs Go workers; each tool competes
# with the server for CPU, so run it on an otherwise idle machine. The load average before
# and after is printed with the figures.
#
# Usage: scripts/bench/load-vs-redis-benchmark.sh
# Environment: CONC (64), REPS (3), N1 (requests per run at -P 1, 200000),
#              N16 (requests per run at -P 16, 1000000), REDIS_SERVER, REDIS_BENCHMARK.
set -euo pipefail

CONC=${CONC:-64}
REPS=${REPS:-3}
N1=${N1:-200000}
N16=${N16:-1000000}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}
SPEC=1e15

BENCH=load-vs-redis-benchmark
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_BENCHMARK" redis-cli go

port=$(free_port)
start_redis "$port"

echo "building bucketctl…" >&2
(cd "$root" && go build -o "$tmp/bucketctl" .)
# The script as bucketctl sends it (the shared prelude and token_bucket.lua).
sha=$(redis-cli -p "$port" SCRIPT LOAD "$("$tmp/bucketctl" script show)")

# rb P N KEY: requests per second of redis-benchmark's EVALSHA.
rb() {
	"$REDIS_BENCHMARK" -h 127.0.0.1 -p "$port" -c "$CONC" -n "$2" -P "$1" --csv \
		EVALSHA "$sha" 1 "$3" "$SPEC" "$SPEC" 1 | tail -n 1 | awk -F'","' '{ print $2 }'
}

# bl P N KEY: decisions per second of bucketctl load (and a check that all were allowed).
bl() {
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

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
echo "redis-server $("$REDIS_SERVER" --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'), $(nproc 2>/dev/null || echo '?') cores," \
	"concurrency $CONC, $N1 requests at -P 1, $N16 at -P 16"
printf '%-4s %-4s %16s %16s %7s\n' rep P redis-benchmark bucketctl ratio
for p in 1 16; do : >"$tmp/rb.$p"; : >"$tmp/bl.$p"; : >"$tmp/ratio.$p"; done
for rep in $(seq 1 "$REPS"); do
	for p in 1 16; do
		n=$N1
		[ "$p" = 16 ] && n=$N16
		if [ $((rep % 2)) = 1 ]; then
			r=$(rb "$p" "$n" "rb:$rep:$p")
			b=$(bl "$p" "$n" "bench-$rep-$p")
		else
			b=$(bl "$p" "$n" "bench-$rep-$p")
			r=$(rb "$p" "$n" "rb:$rep:$p")
		fi
		ratio=$(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.3f", b / r }')
		echo "$r" >>"$tmp/rb.$p"
		echo "$b" >>"$tmp/bl.$p"
		echo "$ratio" >>"$tmp/ratio.$p"
		printf '%-4s %-4s %16s %16s %7s\n' "$rep" "$p" "$r" "$b" "$ratio"
	done
done
echo
echo "medians over $REPS runs (ops/s):"
for p in 1 16; do
	r=$(median <"$tmp/rb.$p")
	b=$(median <"$tmp/bl.$p")
	printf '  -P %-3s redis-benchmark %12s   bucketctl load --pipeline %-3s %12s   ratio %s (median of ratios %s)\n' \
		"$p" "$r" "$p" "$b" "$(awk -v b="$b" -v r="$r" 'BEGIN { printf "%.3f", b / r }')" "$(median <"$tmp/ratio.$p")"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
