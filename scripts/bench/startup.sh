#!/usr/bin/env bash
# Start-up cost, side by side:
#   1. `bucketctl version` against an empty Go program (the floor for any Go binary);
#   2. `bucketctl inspect KEY` of one native bucket against `redis-cli hgetall KEY`, the
#      operator's habit for the same question, on the same local redis-server;
#   3. the libraries' floor: a program that links every third-party package bucketctl
#      links (cobra, viper, go-redis, bubbletea, lipgloss, miniredis... and what they
#      import) and does nothing. Go runs every linked package's init on every run, so no
#      command of bucketctl can start faster than this;
#   4. that floor plus one read of KEY through go-redis, configured as bucketctl's client:
#      the least a one-key inspect can cost with these libraries. What bucketctl adds on
#      top of it is its own part (flags, config, the read script, formatting).
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
# The floors live in a copy of bucketctl's module, so they link the same versions. Both
# link every third-party package bucketctl links; floor-go does nothing, floor-read also
# reads KEY the way bucketctl does (one go-redis client, as bucketctl configures it: HELLO,
# then TIME and the read in one pipeline) and prints the reply.
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
floor floor ""
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
	var h *redis.MapStringStringCmd
	if _, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		t, h = p.Time(ctx), p.HGetAll(ctx, os.Args[2])
		return nil
	}); err != nil {
		panic(err)
	}
	fmt.Println(t.Val(), h.Val())
' context fmt os github.com/redis/go-redis/v9 github.com/redis/go-redis/v9/maintnotifications

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
	"$tmp/floor-go"
	"$tmp/floor-read-go $url $key"
)
names=("empty Go program" "bucketctl version" "redis-cli hgetall" "bucketctl inspect" "libraries' floor" "floor + one read")

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
awk -v a="${means[4]}" -v b="${means[2]}" 'BEGIN { printf "floor / redis-cli hgetall:   %.2fx (linking the libraries alone)\n", a / b }'
awk -v a="${means[5]}" -v b="${means[2]}" 'BEGIN { printf "floor + read / redis-cli:    %.2fx (the libraries and one go-redis read)\n", a / b }'
awk -v a="${means[3]}" -v b="${means[5]}" 'BEGIN { printf "inspect - (floor + read):    %.2f ms (bucketctl'"'"'s own part)\n", a - b }'
