// Package load is bucketctl's load generator: workers that hammer one bucket with
// decisions, in a closed loop or with open-loop arrivals, through bucketctl's script or the
// naive strategies it is compared with, and the run's statistics (counts per second,
// latency, over-grant). Examine and PlanFor check the key first; Engine runs the workers;
// Session runs a comparison's runs in turn. The package never prints.
package load
