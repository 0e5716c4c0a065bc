// Package gitops holds the checks about continuous delivery controllers
// that run in the cluster (Argo CD) and how far one change they apply can
// reach.
package gitops

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		gitopsGlobalPruneCheck(),
		gitopsDeletionGuardCheck(),
	}
}
