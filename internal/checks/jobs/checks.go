// Package jobs holds the checks about Jobs and CronJobs.
package jobs

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		cronJobPileupCheck(),
	}
}
