#!/bin/sh
# The operator's runbook, end to end, as a script would run it: consume, reset --match
# --yes, inspect each key (exit 0, full), consume again without a spec, list --sort-by
# fill, inspect -o json with retry_at and full_at parsed as RFC 3339. It writes keys
# runbook:user:* on the Redis at BUCKETCTL_URL (required); BUCKETCTL is the binary
# (default: bucketctl on PATH). cmd's TestRunbookScript runs it on every 'make test'.
set -eu
: "${BUCKETCTL_URL:?set BUCKETCTL_URL to a Redis this test may write keys runbook:user:* in}"
B=${BUCKETCTL:-bucketctl}
P=runbook:user

fail() {
	echo "runbook-test: $*" >&2
	exit 1
}

# field NAME: the value of a top-level JSON field of stdin, as inspect -o json prints it
# (one field a line), quotes stripped: numbers and times (no commas).
field() {
	sed -n "s/^  \"$1\": \"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}\$/\1/p"
}

# epoch TIME: seconds since 1970 of an RFC 3339 time, after a strict check of its form.
epoch() {
	echo "$1" | grep -Eq '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$' ||
		fail "not an RFC 3339 time: '$1'"
	date -u -d "$1" +%s 2>/dev/null ||
		date -u -j -f '%Y-%m-%dT%H:%M:%S' "$(echo "$1" | cut -c1-19)" +%s 2>/dev/null ||
		fail "date cannot parse '$1'"
}

# 1. Traffic drains the buckets.
for i in 1 2 3; do
	"$B" consume "$P:$i" --capacity 10 --rate 0.01 --cost $((i * 3)) >/dev/null ||
		fail "consume $P:$i: exit $?"
done

# 2. The incident's fix: refill them all.
"$B" reset --match "$P:*" --yes >/dev/null || fail "reset --match: exit $?"

# 3. Verify: each bucket reads, full, its spec kept.
for i in 1 2 3; do
	out=$("$B" inspect "$P:$i" -o json) || fail "inspect $P:$i after the reset: exit $?"
	tokens=$(echo "$out" | field tokens)
	capacity=$(echo "$out" | field capacity)
	[ "$tokens" = 10 ] && [ "$capacity" = 10 ] || fail "inspect $P:$i: tokens '$tokens' of '$capacity', want 10 of 10"
done

# 4. Traffic resumes without a spec: the bucket stores its own.
"$B" consume "$P:1" >/dev/null || fail "consume $P:1 without a spec: exit $?"

# 5. Emptiest first: $P:1 (9 tokens), then the full ones by key.
keys=$("$B" list --match "$P:*" --sort-by fill | awk 'NR > 1 { printf "%s ", $1 }') || fail "list --sort-by fill: exit $?"
[ "$keys" = "$P:1 $P:2 $P:3 " ] || fail "list --sort-by fill: '$keys'"

# 6. The ticket: when 5 tokens are there (now), when the bucket is full (later).
out=$("$B" inspect "$P:1" --cost 5 -o json) || fail "inspect -o json: exit $?"
retry=$(epoch "$(echo "$out" | field retry_at)")
full=$(epoch "$(echo "$out" | field full_at)")
[ "$full" -gt "$retry" ] || fail "full_at ($full) is not after retry_at ($retry)"

echo "runbook-test: ok"
