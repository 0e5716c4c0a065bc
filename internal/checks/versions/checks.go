package versions

import "github.com/kubegap/kubegap/internal/check"

// Checks lists the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		addonEndOfLifeCheck(),
		componentCVEVersionsCheck(),
		etcdKnownBadVersionCheck(),
		kafkaZooKeeperRemovalCheck(),
		kubeletAPIRateLimitCheck(),
		nodeOSLifecycleCheck(),
		staleTokenClientsCheck(),
		versionSkewCheck(),
	}
}
