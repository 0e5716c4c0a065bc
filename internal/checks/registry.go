package checks

import (
	"sort"

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

// All returns every check, sorted by ID: the founding checks of this
// package, and those of the area packages. Adding a check is one file with
// a constructor plus one line in its area's checks.go (or, for a founding
// check, here); tests keep the lists in step with the files.
func All() []Check {
	all := founding()
	for _, area := range areas() {
		all = append(all, area...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}

// areas lists the checks of each area package, one line a package.
func areas() [][]Check {
	return [][]Check{
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

// founding lists the checks of this package.
func founding() []Check {
	return []Check{
		// One line per check: the constructor from the check's own file.
	}
}

// Lookup returns the check with the given ID.
func Lookup(id string) (Check, bool) {
	for _, c := range All() {
		if c.ID == id {
			return c, true
		}
	}
	return Check{}, false
}
