// Package registries holds the checks about where images come from: the
// registries a cluster pulls from, and how it depends on them.
package registries

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		imagePullAlwaysCheck(),
		registryRiskCheck(),
		registryPullFailuresCheck(),
	}
}
