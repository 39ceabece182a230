#!/usr/bin/env bash
# Measures how fast bucketctl finds the bucket being hammered, and what following writes
# costs the server. On its own redis-server (free loopback port, no persistence, stopped at
# the end): the keyspace of build_native_keyspace (lib.sh: N_NATIVE native buckets rate:*,
# N_OTHER_LAYOUT express buckets ex:*, N_MIX other limiters' keys, N_APP other keys); then
# scripts/bench/hotload decides on rate:user:4242 at NATIVE_RATE/s (native script) and on
# ex:ip:777 at OTHER_RATE/s (express's own script), with NOISE_RATE SETs/s on random session
# keys. Prints:
#
#   list --hot -o json          wall time, the rank of both hammered buckets, the source
#   top (tmux, 160x50)          whether rate:user:4242 is on screen 3 s after start
#   server cost                 the server's CPU (INFO cpu, user+sys) per second, under the
#                               same load, while `list --hot --for 10s` observes and while
#                               nothing does; the difference is the cost per second of
#                               observation
#   configuration               CONFIG GET * before and after, and MONITOR/CONFIG SET calls
#
# Usage: scripts/bench/hot.sh
# Environment: N_NATIVE (1000000), N_OTHER_LAYOUT (100000), N_MIX (100000), N_APP (200000), NATIVE_RATE
#              (1500), OTHER_RATE (500), NOISE_RATE (100), REDIS_SERVER, REDIS_CLI.
set -euo pipefail

N_NATIVE=${N_NATIVE:-1000000}
N_OTHER_LAYOUT=${N_OTHER_LAYOUT:-100000}
N_APP=${N_APP:-200000}
NATIVE_RATE=${NATIVE_RATE:-1500}
OTHER_RATE=${OTHER_RATE:-500}
NOISE_RATE=${NOISE_RATE:-100}

BENCH=hot
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" go awk python3 bc tmux

echo "building bucketctl and hotload"
(cd "$root" && go build -o "$tmp/bucketctl" . && go build -o "$tmp/hotload" ./scripts/bench/hotload)
B="$tmp/bucketctl"
start_server
build_native_keyspace 100 50
config_before=$(cli config get '*' | tr -d '\r' | paste - - | sort)
cli config resetstat >/dev/null

"$tmp/hotload" -addr "127.0.0.1:$port" -native rate:user:4242 -native-rate "$NATIVE_RATE" -other ex:ip:777 \
	-other-rate "$OTHER_RATE" -noise-rate "$NOISE_RATE" -noise-keys "$N_APP" -duration 60s &
bench_pids+=($!)
sleep 2 # the load settles

cpu() { cli info cpu | tr -d '\r' | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.4f\n", s }'; }

echo
echo "== list --hot -o json"
start=$(date +%s.%N)
"$B" --url "$url" list --hot -o json >"$tmp/hot.json" 2>"$tmp/hot.err"
wall=$(echo "$(date +%s.%N) - $start" | bc)
printf 'list --hot: %.2f s wall\n' "$wall"
cat "$tmp/hot.err"
python3 - "$tmp/hot.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
keys = [r["key"] for r in rows]
for k in ("rate:user:4242", "ex:ip:777"):
    rank = keys.index(k) + 1 if k in keys else None
    r = rows[rank - 1] if rank else {}
    print(f"  {k}: rank {rank}, {r.get('decisions_per_sec')} decisions/s from {r.get('rate_from')}, denied/s {r.get('denied_per_sec')}, layout {r.get('layout')}")
print("  first rows:", ", ".join(keys[:5]), "· ranked by", rows[0]["ranked_by"] if rows else "-")
PY

echo
echo "== top (tmux 160x50): rate:user:4242 on screen at 3 s?"
tsock="$tmp/tmux.sock"
tmux -S "$tsock" new-session -d -x 160 -y 50 "$B --url $url top --duration 8s; sleep 30"
sleep 3
if tmux -S "$tsock" capture-pane -p | grep -q 'rate:user:4242'; then echo "top: rate:user:4242 on screen at 3 s"; else echo "top: rate:user:4242 NOT on screen at 3 s"; fi
tmux -S "$tsock" capture-pane -p | sed -n '1,6p'
tmux -S "$tsock" kill-server 2>/dev/null || true

echo
echo "== server cost of following writes (10 s each, same load)"
t0=$(date +%s.%N); c0=$(cpu); sleep 10; t1=$(date +%s.%N); c1=$(cpu)
"$B" --url "$url" list --hot --for 10s -o json >/dev/null 2>"$tmp/hot10.err"
t2=$(date +%s.%N); c2=$(cpu)
base=$(echo "($c1 - $c0) * 1000 / ($t1 - $t0)" | bc -l)
obs=$(echo "($c2 - $c1) * 1000 / ($t2 - $t1)" | bc -l)
printf 'server CPU: %.1f ms/s without observation, %.1f ms/s while list --hot observes: %+.1f ms of server CPU per second of observation\n' \
	"$base" "$obs" "$(echo "$obs - $base" | bc -l)"
cat "$tmp/hot10.err"

echo
echo "== configuration"
config_after=$(cli config get '*' | tr -d '\r' | paste - - | sort)
if [ "$config_before" = "$config_after" ]; then echo "CONFIG GET * unchanged"; else echo "CONFIG CHANGED"; diff <(echo "$config_before") <(echo "$config_after") || true; fi
st=$(cli info commandstats | tr -d '\r')
echo "MONITOR calls: $(printf '%s\n' "$st" | grep -c '^cmdstat_monitor:' || true); CONFIG SET calls: $(printf '%s\n' "$st" | grep -c '^cmdstat_config|set:' || true)"
