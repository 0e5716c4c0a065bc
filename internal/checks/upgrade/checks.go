package upgrade

import "github.com/kubegap/kubegap/internal/check"

// Checks lists the checks of this area, one constructor a line.
func Checks() []check.Check {
	return []check.Check{
		removedAPIsCheck(),
		envoyFilterUpgradeHazardsCheck(),
		deprecatedAPIUsageCheck(),
		addonVersionCompatCheck(),
		upgradePreflightCheck(),
		crdStoredVersionDriftCheck(),
		openshiftCgroupV1Check(),
		inTreeCloudProviderCheck(),
		crdOperatorVersionSkewCheck(),
	}
}
