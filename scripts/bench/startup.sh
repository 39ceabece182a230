#!/usr/bin/env bash
# Start-up cost, side by side:
#   1. `bucketctl version` against an empty Go program (the floor for any Go binary);
#   2. `bucketctl inspect KEY` of one native bucket against `redis-cli hgetall KEY`, the
#      operator's habit for the same question, on the same local redis-server.
#
# It starts its own redis-server on a free loopback port (no persistence), builds bucketctl
# as a release does (CGO_ENABLED=0, -trimpath, -s -w) and the empty program, writes one
# bucket with `bucketctl consume`, then measures with hyperfine when it is installed
# (apt-get install hyperfine) or a timed loop of RUNS runs otherwise, prints the mean times
# and the ratios, and cleans up. Run it on an otherwise idle machine: the load average is
# printed with the figures.
#
# Usage: scripts/bench/startup.sh
# Environment: RUNS (200), REDIS_SERVER (redis-server), REDIS_CLI (redis-cli).
set -euo pipefail

RUNS=${RUNS:-200}

BENCH=startup
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" go

port=$(free_port)
start_redis "$port"

echo "building bucketctl and an empty Go program…" >&2
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/bucketctl" .)
mkdir -p "$tmp/empty"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
printf 'module empty\n\ngo 1.22\n' >"$tmp/empty/go.mod"
(cd "$tmp/empty" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/empty-go" .)

url="redis://127.0.0.1:$port"
key="bench:startup:user:42"
"$tmp/bucketctl" --url "$url" consume "$key" --capacity 100 --rate 1 >/dev/null
# Plain output, as in a pipe or a script: no colour, no terminal.
export NO_COLOR=1

cmds=(
	"$tmp/empty-go"
	"$tmp/bucketctl version"
	"$REDIS_CLI -p $port hgetall $key"
	"$tmp/bucketctl --url $url inspect $key"
)
names=("empty Go program" "bucketctl version" "redis-cli hgetall" "bucketctl inspect")

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
means=()
if command -v hyperfine >/dev/null; then
	hyperfine -N -w 20 -r "$RUNS" --export-json "$tmp/h.json" "${cmds[@]}" >&2
	mapfile -t means < <(go run "$root/scripts/bench/hyperfine_means.go" "$tmp/h.json")
else
	for c in "${cmds[@]}"; do
		for _ in $(seq 1 20); do $c >/dev/null; done
		start=$(date +%s%N)
		for _ in $(seq 1 "$RUNS"); do $c >/dev/null; done
		end=$(date +%s%N)
		means+=("$(awk -v d=$((end - start)) -v n="$RUNS" 'BEGIN { printf "%.2f", d / n / 1e6 }')")
	done
fi
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
for i in "${!names[@]}"; do
	printf '%-20s %7s ms\n' "${names[$i]}" "${means[$i]}"
done
awk -v a="${means[1]}" -v b="${means[0]}" 'BEGIN { printf "version / empty Go program:  %.2fx\n", a / b }'
awk -v a="${means[3]}" -v b="${means[2]}" 'BEGIN { printf "inspect / redis-cli hgetall: %.2fx\n", a / b }'
