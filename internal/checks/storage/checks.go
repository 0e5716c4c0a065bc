// Package storage holds the checks about volumes: StorageClasses,
// PersistentVolumes and the CSI drivers behind them.
package storage

import "github.com/kubegap/kubegap/internal/check"

// Checks lists this area's checks, one constructor per line.
func Checks() []check.Check {
	return []check.Check{
		attachLimitCheck(),
		inTreeVolumeMigrationCheck(),
		pvZoneSchedulabilityCheck(),
	}
}
