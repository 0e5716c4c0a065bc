package checks

import "sort"

// All returns every check, sorted by ID. Adding a check is one file with a
// constructor plus one line here; TestEveryCheckIsRegistered keeps the two
// in step.
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
