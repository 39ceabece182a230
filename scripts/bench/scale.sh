#!/usr/bin/env bash
# Measures bucketctl on a production-sized keyspace (build_native_keyspace in lib.sh):
# 1,000,000 native buckets (rate:*, the tagged string), 100,000 buckets of another layout
# (ex:*, express), 100,000 other limiters' keys (webman, Spring Cloud Gateway, Traefik,
# upstash, native-hash, Kong) and 200,000 other keys (sessions, counters, queues, pages)
# beside them, on its own redis-server on a free loopback port (no persistence), stopped at
# the end. Prints every figure the README quotes:
#
#   list --match 'rate:*' --limit 0 > file     wall time, peak RSS, time to the first row
#   the floor of that list                     scripts/bench/scanfloor (SCAN + one pipelined
#                                              GET per page, nothing decided), run just
#                                              before and just after the list; list / floor
#   inspect --match 'rate:*' -o json           wall time, peak RSS
#   audit --match '*'                          wall time, peak RSS (the whole keyspace)
#   reset --match 'ex:*' --layout express     --dry-run, then for real: wall time, client
#                                              CPU, the scripts' server µs per key; exactly
#                                              those keys removed
#   top --match 'rate:*' (in a pseudo-terminal) rows shown within 3 s, "unreachable" never
#                                              shown, another client's PING p99 while it runs
#   commands per bucket and round trips        from the server's INFO commandstats
#
# With CLUSTER=1 it also builds a local 3-master Cluster of 300,000 buckets and prints the
# commands each master served for one list, and that --limit holds across masters.
#
# Usage: scripts/bench/scale.sh
# Environment: N_NATIVE (1000000), N_OTHER_LAYOUT (100000), N_MIX (100000), N_APP (200000), CLUSTER (1),
#              N_CLUSTER (300000), STANDALONE (1; 0 runs the Cluster part only),
#              REDIS_SERVER, REDIS_CLI, REDIS_BENCHMARK.
set -euo pipefail

N_NATIVE=${N_NATIVE:-1000000}
N_OTHER_LAYOUT=${N_OTHER_LAYOUT:-100000}
N_APP=${N_APP:-200000}
CLUSTER=${CLUSTER:-1}
STANDALONE=${STANDALONE:-1}
N_CLUSTER=${N_CLUSTER:-300000}
REDIS_BENCHMARK=${REDIS_BENCHMARK:-redis-benchmark}

BENCH=scale
. "$(dirname "$0")/lib.sh"
need "$REDIS_SERVER" "$REDIS_CLI" "$REDIS_BENCHMARK" go awk python3 bc

# run_measured NAME CMD...: runs CMD with stdout to $tmp/NAME.out; prints wall time, peak RSS
# and client CPU (user + sys).
run_measured() {
	local name=$1; shift
	/usr/bin/time -f '%e %M %U %S' -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	read -r wall rss user sys <"$tmp/$name.time"
	printf '%-44s %7.2f s  %6d MB peak RSS  %5.2f s CPU\n' "$name" "$wall" $((rss / 1024)) "$(echo "$user + $sys" | bc)"
}

echo "building bucketctl"
(cd "$root" && go build -o "$tmp/bucketctl" . && go build -o "$tmp/scanfloor" ./scripts/bench/scanfloor)
B="$tmp/bucketctl"

calls_of() { # commandstats text, command -> calls
	printf '%s\n' "$1" | awk -F'[:=,]' -v c="cmdstat_$2" '$1 == c { n = $3 } END { print n + 0 }'
}

if [ "$STANDALONE" = 1 ]; then
start_server
build_native_keyspace
# Load the read script once, as any earlier bucketctl command would have.
"$B" --url "$url" inspect rate:user:0 >/dev/null

stats() { cli info commandstats | tr -d '\r'; }

floor() { # the floor's wall time in seconds
	/usr/bin/time -f '%e %M' -o "$tmp/floor.time" "$tmp/scanfloor" -addr "127.0.0.1:$port" -match 'rate:*' >/dev/null 2>"$tmp/floor.err"
	read -r fwall frss <"$tmp/floor.time"
	printf 'floor: SCAN + pipelined GET of rate:*: %.2f s, %d MB peak RSS\n' "$fwall" $((frss / 1024)) >&2
	echo "$fwall"
}

echo
echo "== list --match 'rate:*' --limit 0 > file (1M buckets), between two runs of its floor"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
floor1=$(floor)
cli config resetstat >/dev/null
start=$(date +%s.%N)
/usr/bin/time -f '%e %M' -o "$tmp/list.time" "$B" --url "$url" list --match 'rate:*' --limit 0 2>"$tmp/list.err" |
	{ IFS= read -r _header; IFS= read -r _first; date +%s.%N >"$tmp/first"; wc -l >"$tmp/list.lines"; }
read -r wall rss <"$tmp/list.time"
first=$(awk -v s="$start" '{ printf "%.2f", $1 - s }' "$tmp/first")
st=$(stats)
rows=$(($(cat "$tmp/list.lines") + 1))
scans=$(calls_of "$st" scan); reads=$(calls_of "$st" evalsha_ro); times=$(calls_of "$st" time)
gets=$(calls_of "$st" getrange); ttls=$(($(calls_of "$st" pttl) - reads)) # the script's own PTTLs are counted too
printf 'list: %d rows, %.2f s, %d MB peak RSS, first row after %s s\n' "$rows" "$wall" $((rss / 1024)) "$first"
printf 'list: Redis cost: %d SCAN pages, %d GETRANGE + %d PTTL, %d read scripts, %d TIME; %.2f commands per bucket\n' \
	"$scans" "$gets" "$ttls" "$reads" "$times" "$(echo "($scans + $gets + $ttls + $reads + $times) / $rows" | bc -l)"
floor2=$(floor)
printf 'list / floor: %.2f (floor %.2f s before, %.2f s after; load average %s)\n' \
	"$(echo "2 * $wall / ($floor1 + $floor2)" | bc -l)" "$floor1" "$floor2" "$(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "== inspect --match 'rate:*' -o json (1M buckets)"
run_measured "inspect --match 'rate:*' -o json" "$B" --url "$url" inspect --match 'rate:*' -o json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('inspect: valid JSON array of', len(d), 'buckets')" "$tmp/inspect --match 'rate:*' -o json.out"
rm -f "$tmp"/inspect*.out

echo
echo "== audit --match '*' (the whole keyspace: every limiter's keys and the application's)"
run_measured "audit --match '*'" "$B" --url "$url" audit --match '*'
rm -f "$tmp"/audit*.out

echo
echo "== reset --match 'ex:*' --layout express --dry-run, then --yes (100k express buckets, declared)"
usec_of() { # commandstats text, command -> server µs per call
	printf '%s\n' "$1" | awk -F'[:=,]' -v c="cmdstat_$2" '$1 == c { u = $7 } END { print u + 0 }'
}
# Load the reset script once, as any earlier reset would have.
"$B" --url "$url" reset ex:none --layout express --yes >/dev/null 2>&1 || true
cli config resetstat >/dev/null
run_measured "reset --match 'ex:*' --layout express --dry-run" "$B" --url "$url" reset --match 'ex:*' --layout express --dry-run
tail -n 1 "$tmp/reset --match 'ex:*' --layout express --dry-run.err"
echo "reset --dry-run: read script $(usec_of "$(stats)" evalsha_ro) µs per key on the server"
before_other=$(($(cli dbsize) - N_OTHER_LAYOUT))
cli config resetstat >/dev/null
run_measured "reset --match 'ex:*' --layout express --yes" "$B" --url "$url" reset --match 'ex:*' --layout express --yes
tail -n 3 "$tmp/reset --match 'ex:*' --layout express --yes.err"
st=$(stats)
echo "reset --yes: read script $(usec_of "$st" evalsha_ro) µs, reset script $(usec_of "$st" evalsha) µs per key on the server"
left=$(cli --scan --pattern 'ex:*' | wc -l)
after=$(cli dbsize)
echo "reset: ex:* keys left: $left; other keys before $before_other, after $after"

echo
echo "== top --match 'rate:*' in tmux (160x50), 10 s; PING p99 of another client"
command -v tmux >/dev/null || { echo "scale: tmux is not installed (apt-get install tmux)" >&2; exit 1; }
ping_p99() { "$REDIS_BENCHMARK" -p "$port" -t ping_inline -n 20000 -c 1 --precision 3 2>/dev/null | tr -d '\r' |
	awk '/latency summary/ { getline; getline; print "p50 " $3 " ms, p99 " $5 " ms, max " $6 " ms" }'; }
echo "PING alone:      $(ping_p99)"
tsock="$tmp/tmux.sock"
tmux -S "$tsock" new-session -d -x 160 -y 50 "$B --url $url top --match 'rate:*' --duration 10s; sleep 30"
start=$(date +%s.%N); rows=0
while [ "$(echo "$(date +%s.%N) - $start < 3" | bc)" = 1 ]; do
	rows=$(tmux -S "$tsock" capture-pane -p | grep -c 'rate:user:' || true)
	[ "$rows" -ge 10 ] && break
	sleep 0.1
done
first=$(echo "$(date +%s.%N) - $start" | bc)
printf 'top: %d rows on screen after %.2f s\n' "$rows" "$first"
echo "PING during top: $(ping_p99)"
tmux -S "$tsock" capture-pane -p | head -1
if tmux -S "$tsock" capture-pane -p | grep -q 'unreachable'; then echo "top: said unreachable"; else echo "top: never said unreachable"; fi
tmux -S "$tsock" kill-server 2>/dev/null || true

fi

[ "$CLUSTER" = 1 ] || exit 0
echo
echo "== local 3-master Cluster, $N_CLUSTER buckets"
cports=()
for i in 0 1 2; do
	p=$(free_cluster_port); cports+=("$p")
	start_redis "$p" --cluster-enabled yes --cluster-config-file "nodes-$p.conf"
done
"$REDIS_CLI" -p "${cports[0]}" cluster addslotsrange 0 5460 >/dev/null
"$REDIS_CLI" -p "${cports[1]}" cluster addslotsrange 5461 10922 >/dev/null
"$REDIS_CLI" -p "${cports[2]}" cluster addslotsrange 10923 16383 >/dev/null
for p in "${cports[@]:1}"; do "$REDIS_CLI" -p "${cports[0]}" cluster meet 127.0.0.1 "$p" >/dev/null; done
# Every node must see the whole Cluster before it takes writes.
cluster_ok() {
	for p in "${cports[@]}"; do
		"$REDIS_CLI" -p "$p" cluster info | tr -d '\r' | grep -q 'cluster_state:ok' || return 1
	done
}
for _ in $(seq 200); do cluster_ok && break; sleep 0.1; done
cluster_ok || { echo "scale: the local Cluster did not come up in 20 s" >&2; exit 1; }
# Each master gets its own keys through redis-cli --pipe: the slot of each key is computed
# here (CRC16 mod 16384, as Redis does).
python3 - "$N_CLUSTER" "$tmp" <<'PY'
import struct, sys
n, tmp = int(sys.argv[1]), sys.argv[2]
def crc16(b):
    crc = 0
    for x in b:
        crc ^= x << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc
out = [open(f"{tmp}/cluster-{i}.txt", "wb") for i in range(3)]
for i in range(n):
    k = f"rl:{i}"
    slot = crc16(k.encode()) % 16384
    node = 0 if slot <= 5460 else (1 if slot <= 10922 else 2)
    v = b"bucketctl:v1:\x00" + struct.pack("<dd", 5, 1700000000000000) + bytes(14) + struct.pack("<ddI", 10, 1, 0)
    out[node].write(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k.encode(), len(v), v))
for f in out:
    f.close()
PY
for i in 0 1 2; do "$REDIS_CLI" -p "${cports[$i]}" --pipe <"$tmp/cluster-$i.txt" >/dev/null; done
rm -f "$tmp"/cluster-*.txt
for p in "${cports[@]}"; do "$REDIS_CLI" -p "$p" config resetstat >/dev/null; done
curl=127.0.0.1:${cports[0]}
run_measured "cluster: list --match 'rl:*' --limit 0" "$B" --cluster "$curl" list --match 'rl:*' --limit 0
for p in "${cports[@]}"; do
	s=$("$REDIS_CLI" -p "$p" info commandstats | tr -d '\r')
	# A key read with the script counts once (the PTTL inside it), one read natively twice.
	echo "master 127.0.0.1:$p: $(( $(calls_of "$s" scan) + $(calls_of "$s" getrange) + $(calls_of "$s" pttl) + $(calls_of "$s" time) )) commands, $("$REDIS_CLI" -p "$p" dbsize) keys"
done
n=$("$B" --cluster "$curl" list --match 'rl:*' --limit 1000 -o jsonl | wc -l)
echo "cluster: list --limit 1000 printed $n rows"
