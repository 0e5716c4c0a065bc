// Package resources holds the checks about node resources: what nodes
// hold back for themselves, how the kernel enforces pod limits, and pools
// whose pods ask for no memory.
package resources

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		cpuLimitCFSKernelCheck(),
		nodeDiskDriftCheck(),
		nodeReservationCheck(),
		unrequestedMemoryCheck(),
		nodeCriticalDaemonOOMCheck(),
		gatekeeperAuditOOMCheck(),
	}
}
