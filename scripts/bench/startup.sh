#!/usr/bin/env bash
# Start-up cost, side by side:
#   1. package initialisation: `GODEBUG=inittrace=1 bucketctl version`, the sum of every
#      package's init clock time (Go runs every linked package's init on every run, so this
#      is what any command pays before main), median of INIT_RUNS runs, and the packages
#      that cost the most;
#   2. `bucketctl inspect KEY` of one native bucket against `redis-cli get KEY`, the
#      operator's habit for the same question, on the same local redis-server;
#   3. `bucketctl version` against an empty Go program (the floor for any Go binary);
#   4. the libraries' floor plus one read: a program that links every third-party package
#      bucketctl links (cobra, viper, go-redis, bubbletea, lipgloss, miniredis... and what
#      they import) and reads KEY once through go-redis, configured as bucketctl's client:
#      the least a one-key inspect can cost with these libraries.
#
# Comparisons are paired (scripts/bench/pairs.go): A and B run in turn, A B A B ..., each
# run timed as a whole process, and the ratio is the median of the PAIRS pairs' ratios, so
# a machine whose speed drifts during the run moves both sides of each pair alike.
#
# It starts its own redis-server on a free loopback port (no persistence), builds bucketctl
# as a release does (CGO_ENABLED=0, -trimpath, -s -w), writes one bucket with `bucketctl
# consume`, measures, and cleans up. Run it on an otherwise idle machine: the load average
# is printed with the figures.
#
# Usage: scripts/bench/startup.sh
# Environment: PAIRS (20), INIT_RUNS (21), REDIS_SERVER (redis-server), REDIS_CLI (redis-cli).
set -euo pipefail

PAIRS=${PAIRS:-20}
INIT_RUNS=${INIT_RUNS:-21}

BENCH=startup
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" go

port=$(free_port)
start_redis "$port"

echo "building bucketctl, an empty Go program and the floors…" >&2
(cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/bucketctl" .)
(cd "$root" && go build -o "$tmp/pairs" scripts/bench/pairs.go)
mkdir -p "$tmp/empty"
printf 'package main\n\nfunc main() {}\n' >"$tmp/empty/main.go"
printf 'module empty\n\ngo 1.22\n' >"$tmp/empty/go.mod"
(cd "$tmp/empty" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/empty-go" .)
# The floor lives in a copy of bucketctl's module, so it links the same versions: every
# third-party package bucketctl links, and a read of KEY the way bucketctl reads it (one
# go-redis client, as bucketctl configures it: HELLO, then TIME and the read in one
# pipeline), printing the reply.
floor() { # floor NAME MAIN_BODY EXTRA_IMPORTS...
	local name=$1 dir="$tmp/$1" body=$2
	shift 2
	mkdir -p "$dir"
	sed "s#^module .*#module $name#" "$root/go.mod" >"$dir/go.mod"
	cp "$root/go.sum" "$dir/"
	{
		printf 'package main\n\nimport (\n'
		for i in "$@"; do printf '\t"%s"\n' "$i"; done
		(cd "$root" && go list -deps .) | grep -E '^[^/]+\.[^/]+/' |
			grep -v -e '^github.com/bucketctl/' -e '/internal' -e '^vendor/' |
			grep -v -x -F -f <(printf '%s\n' "$@") | sed 's/.*/\t_ "&"/'
		printf ')\n\nfunc main() {%s}\n' "$body"
	} >"$dir/main.go"
	(cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/$name-go" .)
}
floor floor-read '
	ctx := context.Background()
	opt, err := redis.ParseURL(os.Args[1])
	if err != nil {
		panic(err)
	}
	opt.MaxRetries, opt.DisableIdentity = -1, true
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	c := redis.NewClient(opt)
	var t *redis.TimeCmd
	var h *redis.StringCmd
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		t, h = p.Time(ctx), p.Get(ctx, os.Args[2])
		return nil
	}); err != nil {
		panic(err)
	}
	fmt.Println(t.Val(), h.Val())
' context fmt os github.com/redis/go-redis/v9 github.com/redis/go-redis/v9/maintnotifications

url="redis://127.0.0.1:$port"
key="bench:startup:user:42"
# A slow refill keeps the bucket (its TTL covers the refill) for the whole run.
"$tmp/bucketctl" --url "$url" consume "$key" --capacity 100 --rate 0.01 >/dev/null
# Plain output, as in a pipe or a script: no colour, no terminal.
export NO_COLOR=1

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. Package initialisation, bucketctl's and the libraries' floor's in turn (the floor's
#    is what linking the libraries costs whatever bucketctl does).
for _ in $(seq "$INIT_RUNS"); do
	GODEBUG=inittrace=1 "$tmp/bucketctl" version 2>&1 >/dev/null | awk '/^init / { print $2, $5 }' >"$tmp/trace"
	awk '{ s += $2 } END { printf "%.3f\n", s }' "$tmp/trace" >>"$tmp/init-total"
	cat "$tmp/trace" >>"$tmp/init-all"
	GODEBUG=inittrace=1 "$tmp/floor-read-go" "$url" "$key" 2>&1 >/dev/null |
		awk '/^init / { s += $5 } END { printf "%.3f\n", s }' >>"$tmp/floor-init-total"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
init_total=$(median <"$tmp/init-total")
echo "package init (GODEBUG=inittrace=1 bucketctl version, sum of clock, median of $INIT_RUNS): $init_total ms"
echo "  the libraries' floor, in turn with it:                              $(median <"$tmp/floor-init-total") ms"
echo "  the costliest packages (median ms of clock):"
for p in $(awk '{ print $1 }' "$tmp/init-all" | sort -u); do
	printf '%s %s\n' "$(awk -v p="$p" '$1 == p { print $2 }' "$tmp/init-all" | median)" "$p"
done | sort -rn | head -12 | awk '{ printf "    %.3f  %s\n", $1, $2 }'

# 2-4. Whole processes, paired.
pair() { "$tmp/pairs" -n "$PAIRS" -a "$1" -b "$2"; }
inspect=$(pair "$tmp/bucketctl --url $url inspect $key" "$REDIS_CLI -p $port get $key")
version=$(pair "$tmp/bucketctl version" "$tmp/empty-go")
floorr=$(pair "$tmp/floor-read-go $url $key" "$REDIS_CLI -p $port get $key")
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
echo "inspect KEY vs redis-cli get KEY:          $inspect"
echo "version vs an empty Go program:            $version"
echo "libraries' floor + one read vs redis-cli:  $floorr"
