// Package checks is kubegap's check registry: every check lives in an area
// package below it (internal/checks/<area>: availability, runtime,
// versions, ...) and is listed once here, through that area's Checks(). A
// check reads the snapshot and returns findings; it never talks to a
// cluster. The types checks are made of live in internal/check. Besides
// the registry (All, Lookup, Find, Area) this package holds only the tests
// that run every check together: case links, managed clusters, the
// catalogue in docs/checks.md, benchmarks.
package checks

import (
	"sort"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks/agents"
	"github.com/kubegap/kubegap/internal/checks/autoscaling"
	"github.com/kubegap/kubegap/internal/checks/availability"
	"github.com/kubegap/kubegap/internal/checks/certs"
	"github.com/kubegap/kubegap/internal/checks/dns"
	"github.com/kubegap/kubegap/internal/checks/gitops"
	"github.com/kubegap/kubegap/internal/checks/ingress"
	"github.com/kubegap/kubegap/internal/checks/jobs"
	"github.com/kubegap/kubegap/internal/checks/objects"
	"github.com/kubegap/kubegap/internal/checks/probes"
	"github.com/kubegap/kubegap/internal/checks/rbac"
	"github.com/kubegap/kubegap/internal/checks/registries"
	"github.com/kubegap/kubegap/internal/checks/resources"
	"github.com/kubegap/kubegap/internal/checks/runtime"
	"github.com/kubegap/kubegap/internal/checks/scheduling"
	"github.com/kubegap/kubegap/internal/checks/storage"
	"github.com/kubegap/kubegap/internal/checks/upgrade"
	"github.com/kubegap/kubegap/internal/checks/versions"
)

// All returns every check of the area packages, sorted by ID. Adding a
// check is one file with a constructor in its area package plus one line
// in that area's checks.go; tests keep the lists in step with the files,
// and TestNoCheckInRegistryRoot keeps checks out of this package.
func All() []check.Check {
	var all []check.Check
	for _, area := range areas() {
		all = append(all, area...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// areas lists the checks of each area package, one line a package.
func areas() [][]check.Check {
	return [][]check.Check{
		agents.Checks(),
		autoscaling.Checks(),
		availability.Checks(),
		certs.Checks(),
		dns.Checks(),
		gitops.Checks(),
		ingress.Checks(),
		jobs.Checks(),
		objects.Checks(),
		probes.Checks(),
		rbac.Checks(),
		registries.Checks(),
		resources.Checks(),
		runtime.Checks(),
		scheduling.Checks(),
		storage.Checks(),
		upgrade.Checks(),
		versions.Checks(),
	}
}

// Lookup returns the check with the given ID.
func Lookup(id string) (check.Check, bool) {
	for _, c := range All() {
		if c.ID == id {
			return c, true
		}
	}
	return check.Check{}, false
}
