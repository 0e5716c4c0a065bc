package upgrade

import "github.com/kubegap/kubegap/internal/check"

// NewestKnownMinor is the newest Kubernetes minor an upgrade preflight can
// be asked to judge: judgesTargetsThrough in upgrade-facts.yaml, the minor
// whose contents were settled when the tables were last reviewed. Past it,
// removals, kubelet requirements, provider retirements and add-on lists no
// table could hold yet may apply, so audit.ParseTarget refuses such a
// target. newestTabled, the newest minor any row names, is never past it.
func NewestKnownMinor() (check.KubeVersion, error) {
	f, err := loadFacts()
	if err != nil {
		return check.KubeVersion{}, err
	}
	return check.KubeVersion{Major: f.judgesThrough.Major, Minor: f.judgesThrough.Minor}, nil
}

// newestTabled is the newest minor a row of the preflight tables names: a
// removal (removedAPIs), a kubelet requirement (cgroup v1, container
// runtimes, dockershim), a provider's add-on switch or node OS retirement,
// or a minor an add-on release is listed with (addon-compat.yaml).
func newestTabled() (check.KubeVersion, error) {
	f, err := loadFacts()
	if err != nil {
		return check.KubeVersion{}, err
	}
	a, err := loadAddonFacts()
	if err != nil {
		return check.KubeVersion{}, err
	}
	var newest check.KubeVersion
	see := func(v check.KubeVersion) {
		if newest.Less(v) {
			newest = check.KubeVersion{Major: v.Major, Minor: v.Minor}
		}
	}
	for _, r := range f.RemovedAPIs {
		see(r.removedIn)
	}
	see(f.cgroupV1Refused)
	for _, pc := range f.ProviderChanges {
		see(pc.minor)
	}
	for _, c := range f.RuntimeAtTarget.ContainerdBelow {
		see(c.kubeletFrom)
	}
	see(f.RuntimeAtTarget.dockershimRemoved)
	for _, n := range f.NodeOSAtTarget {
		see(n.from)
	}
	for _, t := range a.Addons {
		for _, r := range t.Releases {
			see(r.newest)
		}
	}
	return newest, nil
}
