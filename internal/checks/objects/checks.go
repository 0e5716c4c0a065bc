// Package objects holds the checks about how many objects the cluster
// keeps: counts that grow until etcd and the API server fail, and the
// size of etcd's database against its space quota, and how long the API
// server takes to write single objects.
package objects

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		objectCountExplosionCheck(),
		etcdCapacitySignalsCheck(),
		customResourceSizeCheck(),
		apiWriteLatencyCheck(),
	}
}
