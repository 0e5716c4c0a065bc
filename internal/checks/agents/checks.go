// Package agents holds the checks about per-node agents: the load they put
// on the API server, and the credentials IAM brokers among them hand out.
package agents

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		apiHeavyNodeAgentsCheck(),
		credentialBrokerDurationCheck(),
	}
}
