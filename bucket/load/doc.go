// Package load is bucketctl's load generator: workers that hammer one bucket, closed loop or
// open loop, through bucketctl's script or the naive strategies it is compared with, and the
// run's statistics. Examine and PlanFor check the key first; Engine runs the workers; Session
// runs a comparison's runs in turn. The package never prints.
package load
