package checks

import (
	"sort"

	"github.com/kubegap/kubegap/internal/checks/autoscaling"
	"github.com/kubegap/kubegap/internal/checks/ingress"
	"github.com/kubegap/kubegap/internal/checks/jobs"
	"github.com/kubegap/kubegap/internal/checks/probes"
	"github.com/kubegap/kubegap/internal/checks/registries"
	"github.com/kubegap/kubegap/internal/checks/resources"
	"github.com/kubegap/kubegap/internal/checks/storage"
)

// All returns every check, sorted by ID: the founding checks of this
// package, and those of the area packages. Adding a check is one file with
// a constructor plus one line in its area's checks.go (or, for a founding
// check, here); tests keep the lists in step with the files.
func All() []Check {
	all := []Check{
		// One line per check: the constructor from the check's own file.
		containerdChainedCNICheck(),
		hostBinaryGlibcCheck(),
		imagePullAlwaysCheck(),
		nodeOSLifecycleCheck(),
		pdbBlocksDrainCheck(),
		podSandboxFailuresCheck(),
		versionSkewCheck(),
		webhookBlastRadiusCheck(),
	}
	for _, area := range [][]Check{
		// One line per area package: internal/checks/<area>.Checks().
		autoscaling.Checks(),
		ingress.Checks(),
		jobs.Checks(),
		probes.Checks(),
		registries.Checks(),
		resources.Checks(),
		storage.Checks(),
	} {
		all = append(all, area...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
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
