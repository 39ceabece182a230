#!/usr/bin/env bash
# `bucketctl list` of N_NATIVE (1,000,000) native buckets against its floor, side by side:
# scripts/bench/scanfloor walks the same keys with SCAN MATCH (COUNT 500) and one pipelined
# GET per page, a line per key, nothing decided. The two run in turn, A B A B ...
# (scripts/bench/pairs.go), each a whole process with its output to /dev/null, and the
# ratio is the median of the PAIRS pairs' ratios; a pair in which the host took more than
# 3% of the cores (steal) does not count. make bench runs it; scale.sh measures
# the same list among 1.43M keys of every kind, with its Redis cost.
#
# It starts its own redis-server on a free loopback port (no persistence), fills it with
# build_native_keyspace (native buckets only), measures and cleans up.
#
# Usage: scripts/bench/list-vs-floor.sh
# Environment: N_NATIVE (1000000), PAIRS (5), REDIS_SERVER, REDIS_CLI.
set -euo pipefail

N_NATIVE=${N_NATIVE:-1000000}
PAIRS=${PAIRS:-5}

BENCH=list-vs-floor
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" go python3

start_server
(cd "$root" && go build -o "$tmp/bucketctl" . && go build -o "$tmp/scanfloor" ./scripts/bench/scanfloor &&
	go build -o "$tmp/pairs" scripts/bench/pairs.go)
N_OTHER_LAYOUT=0 N_MIX=0 N_APP=0 build_native_keyspace >&2
# Load the read script once, as any earlier bucketctl command would have.
"$tmp/bucketctl" --url "$url" inspect rate:user:0 >/dev/null

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf 'list of %d native buckets vs its floor (SCAN + pipelined GET): ' "$N_NATIVE"
"$tmp/pairs" -n "$PAIRS" -steal 3 -warmup 1 -a "$tmp/bucketctl --url $url list --match rate:* --limit 0" \
	-b "$tmp/scanfloor -addr 127.0.0.1:$port -match rate:*"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
