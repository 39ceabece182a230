// Package load is bucketctl's load generator: workers that hammer one bucket with
// decisions, in a closed loop or with open-loop arrivals (constant or Poisson, with
// bursts), through bucketctl's atomic script or through the naive strategies a Go
// benchmark compares it with, and the statistics of the run: counts per second, latency
// (HdrHistogram) and the over-grant against the theoretical maximum.
//
// A run is always bounded in time (MaxDuration at most) and usually in requests. The
// package never prints: a caller polls Snapshot while Run works and renders the Report.
package load
