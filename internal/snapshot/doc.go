// Package snapshot is the in-memory model of a cluster that checks read: the
// objects of the resources kubegap knows, trimmed to what checks use, with
// the coverage of each resource (read, forbidden, not served, ...). It loads
// from files (YAML, JSON, List objects, gzip, kubegap snapshots) and saves
// kubegap snapshot files; the live reader in package cluster fills the same
// model.
package snapshot
