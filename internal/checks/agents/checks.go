// Package agents holds the checks about per-node agents and the load they
// put on the API server.
package agents

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		apiHeavyNodeAgentsCheck(),
		credentialBrokerDurationCheck(),
	}
}
