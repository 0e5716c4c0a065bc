// Package dns holds the checks about cluster DNS: CoreDNS sizing and
// version, and NodeLocal DNSCache.
package dns

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		corednsCapacityCheck(),
		nodelocalDNSHazardsCheck(),
		eksCorednsVersionCheck(),
		clusterDNSKnownBadReleaseCheck(),
		eksAddonDriftCheck(),
	}
}
