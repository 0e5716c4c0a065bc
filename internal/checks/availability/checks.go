// Package availability holds the checks about what one node, zone or
// maintenance step can take offline: replicas that share a failure domain,
// Services whose endpoints sit on nodes being drained, workloads a drain
// takes down, nodes that hold pods they cannot remove, aggregated APIs
// whose outage stalls namespace deletion, and node-critical DaemonSets
// that cannot claim room on a full node.
package availability

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		criticalAddonColocationCheck(),
		deschedulerEvictsCordonedCheck(),
		disruptionExposureCheck(),
		replicaSpreadCheck(),
		podsStuckTerminatingCheck(),
		aggregatedAPIUnavailableCheck(),
		systemDaemonSetPriorityCheck(),
		poolScalesToZeroCheck(),
		pdbBlocksDrainCheck(),
		webhookBlastRadiusCheck(),
		karpenterDisruptionExposureCheck(),
	}
}
