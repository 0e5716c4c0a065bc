// Package resources holds the checks about node resources: what nodes
// hold back for themselves, and how the kernel enforces pod limits.
package resources

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		cpuLimitCFSKernelCheck(),
		nodeDiskDriftCheck(),
		nodeReservationCheck(),
	}
}
