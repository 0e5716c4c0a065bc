// Package probes holds the checks about liveness, readiness and startup
// probes.
package probes

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		probeCascadeCheck(),
		controlPlaneRestartsCheck(),
	}
}
