// Package certs holds the checks about certificates: end dates of the
// certificates the API exposes without Secret access.
package certs

import "github.com/kubegap/kubegap/internal/check"

// Checks returns the area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		certificateExpiryCheck(),
	}
}
