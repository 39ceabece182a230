// Package load is bucketctl's load generator: workers that hammer one bucket with
// decisions, in a closed loop or with open-loop arrivals (constant or Poisson, with bursts),
// through bucketctl's atomic script or the naive strategies it is compared with, and the
// run's statistics: counts per second, latency (HdrHistogram) and the over-grant against
// the theoretical maximum.
//
// Config and the arrivals' schedule are in config.go; Examine and PlanFor (target.go) check
// the key first, since a run writes nothing but a native bucket; Engine (engine.go) runs the
// workers, each with a decider of its Strategy (strategy.go); they record into shards
// (stats.go), which Snapshot and Report (report.go) sum. Session runs a comparison's plans
// one after another. A run is bounded in time (MaxDuration at most). The package never
// prints: a caller polls Snapshot while Run works and renders the Report.
package load
