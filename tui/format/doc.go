// Package format is the one formatting layer: every number, duration, rate and key name a
// person reads, in a table, a line, an error message or a TUI view, and every number a
// runbook reads in JSON or YAML, goes through it, one rule per kind of value, so a bucket
// reads the same in list, inspect, watch, top, check and consume. Beside the standard
// library it imports only charmbracelet/x/ansi (display widths, for TruncMiddle): no TUI
// framework, no styles, so commands that draw nothing can use it.
//
// For people:
//
//	tokens (levels, capacities, costs)  Tokens: floored to what is shown, so a shown level
//	                                    is never more than the bucket holds: 0.99, 9.4,
//	                                    63.2, 9,289, 16,000, then 340k, 1.3M (as counts).
//	                                    A level is shown as the owning application reads
//	                                    it: a negative one (Webman's refill from a time
//	                                    ahead of its clock) is shown negative, everywhere
//	rates                               Rate: per second, rounded; below 1 two significant
//	                                    digits: 0.5/s, 12/s, 1,500/s; below 0.01/s per
//	                                    hour: 6.12/h. PerSecond is the bare number for a
//	                                    column or field that names its unit (per second)
//	counts (keys, requests)             Count: 5,003, then 340k, 1.3M; GroupDigits exact
//	percentages                         Percent: whole, floored: 99.6% full is 99%, not
//	                                    full; above 0 and below 1%: <1%
//	durations                           Duration: 850ms, 3.7s, 56s, 1m4s, 2h5m, 3d4h; cut
//	                                    toward zero in every unit: 9.96s is 9.9s, 10.9s 10s
//	measured run time                   Seconds, to the millisecond: 2.004s, 10s
//	TTLs                                TTL: a duration, "none" (no TTL), "-" (no key)
//	ages                                Ago: "4.2s ago"; Age in a column: "4.2s"
//	a stored time ahead                 Ahead: "4.2s ahead of the server's clock (client
//	                                    clock skew?)"; AheadShort in a column: "4.2s ahead"
//	GCRA debt                           Debt: "TAT 4.2s past a full window: debt (...)"
//	retry-after                         RetryAfter: a duration, or NeverAllowed ("never:
//	                                    cost exceeds capacity"); in JSON -1 (JSONRetryAfter)
//	latencies                           Latency: 412µs, 1.23ms, 12.3ms, 123ms, 1.2s; cut
//	                                    as Duration: 0.9996ms is 999µs, never 1000µs
//	chart axis ticks                    Axis, compact: 500, 2.5k, 10k, 1.5M
//	sizes                               Bytes: ~1.2 MiB
//	key names and free text             SafeKey, SafeText, QuoteKey: nothing a terminal
//	                                    would interpret; TruncMiddle for a narrow column
//	advice on a bare number             DeclareHint: "declare --layout redis-rate or a
//	                                    rule in the config file"
//
// For JSON and YAML (runbooks read the same precision from every command): JSONTokens,
// JSONRatio, JSONRate, JSONSpec, JSONSeconds, JSONMS, JSONRetryAfter, JSONTTL; see json.go.
package format
