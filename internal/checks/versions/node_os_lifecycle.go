package versions

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Case IDs the node-os-lifecycle check cites.
const (
	caseUbuntuSystemdDNS = "ubuntu-systemd-dns-2022"
	caseDatadogNetworkd  = "datadog-systemd-networkd-cilium-2023"
	caseHWEKernelPanic   = "ubuntu-hwe-5-13-kernel-container-panic"
	// Node images a managed service retired: AKS (Ubuntu 18.04, Azure
	// Linux 2.0) and EKS (Amazon Linux 2).
	caseAKSNodeOSRetired = "aks-node-os-retirements-ubuntu1804-azurelinux2-2025"
	caseEKSAL2Retired    = "eks-amazon-linux-2-ami-end-of-support-2025"
	// Every node rebooted into a new kernel at once, with nothing rolling it.
	caseAllNodesRebooted = "pgmac-simultaneous-three-node-reboot-2026"
)

// nodeOSLifecycleCheck reports node OS releases past their vendor's
// standard support, AKS node images left months behind, and fleets where
// every node takes the same in-place OS update at once with nothing staging
// it: the conditions of the Ubuntu systemd DNS outage, Datadog's
// networkd/Cilium outage and the Ubuntu HWE kernel panic.
//
// The date it compares against is the wall clock at the time of the audit:
// "is this release still supported" is a question about today, also for a
// snapshot taken earlier. Tests pass their own clock through
// NodeOSLifecycleAt.
func nodeOSLifecycleCheck() check.Check { return NodeOSLifecycleAt(time.Now) }

// NodeOSLifecycleAt is node-os-lifecycle on the clock now: exported for
// the registry's cross-check tests, which audit one cluster on set days.
func NodeOSLifecycleAt(now func() time.Time) check.Check {
	return check.Check{
		ID:       "node-os-lifecycle",
		Title:    "Node OS past end of support, stale node images, or one OS image patched in place everywhere",
		Severity: finding.Medium,
		Description: "Reads each node's osImage and kernel and reports nodes on an OS release past its support: the " +
			"managed service's own node image window where one is tabled (AKS, EKS), else the vendor's standard " +
			"support; Windows Server nodes included. It also reports long-lived AKS nodes whose node image is months " +
			"old (their packages change in place, outside any staged rollout), and fleets where nearly every node " +
			"runs one OS image and kernel that updates packages in place, with no patch coordinator such as kured " +
			"and no sign of managed image refreshes: one bad package update then reaches every node in the same " +
			"window. An OS image it does not recognise, or whose support end is not tabled, leaves the check partial.",
		Reads: []check.Input{{Resource: snapshot.Nodes}, check.Optional(snapshot.DaemonSets), check.Optional(snapshot.Deployments)},
		Rules: []check.Rule{
			{ID: ruleOSEndOfSupport, Summary: "node OS releases within their provider's or vendor's support",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleStaleNodeImage, Summary: "AKS node images not months old, pools not left behind",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: rulePatchMonoculture, Summary: "no fleet on one in-place-updated OS image and kernel without a patch coordinator",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.Deployments}},
		},
		Cases: check.Cite(check.Related(caseUbuntuSystemdDNS, caseAzureCNIGlibc), check.Prevents(caseDatadogNetworkd, caseHWEKernelPanic,
			caseAKSNodeOSRetired, caseEKSAL2Retired, caseAllNodesRebooted)),
		Run: func(ctx *check.Context) ([]finding.Finding, error) {
			return runNodeOSLifecycle(ctx, now().UTC())
		},
	}
}

// Rules of node-os-lifecycle.
const (
	ruleOSEndOfSupport   = "os-end-of-support"
	ruleStaleNodeImage   = "stale-node-image"
	rulePatchMonoculture = "patch-monoculture"
)

// lifecycleFacts is data/node-os-lifecycle.yaml.
type lifecycleFacts struct {
	InPlaceUpdateOS []string `json:"inPlaceUpdateOS"`
	// LockedReleaseOS are image-pinned package-based systems: each says why
	// with its own source.
	LockedReleaseOS []struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Note   string `json:"note"`
	} `json:"lockedReleaseOS"`
	PatchCoordinators []struct {
		Name   string   `json:"name"`
		Match  []string `json:"match"`
		Source string   `json:"source"`
	} `json:"patchCoordinators"`
	// Sources back inPlaceUpdateOS (each coordinator has its own source).
	Sources            []string `json:"sources"`
	AKSNodeImageLabel  string   `json:"aksNodeImageLabel"`
	AKSNodeImageSource string   `json:"aksNodeImageSource"`
	Thresholds         struct {
		BehindFleetDays     int     `json:"behindFleetDays"`
		StaleDays           int     `json:"staleDays"`
		RecentImageDays     int     `json:"recentImageDays"`
		YoungNodeDays       int     `json:"youngNodeDays"`
		MonocultureShare    float64 `json:"monocultureShare"`
		MonocultureMinNodes int     `json:"monocultureMinNodes"`
	} `json:"thresholds"`
}

//go:embed data/node-os-lifecycle.yaml
var nodeOSLifecycleYAML []byte

// loadLifecycleFacts parses the embedded file once; read-only after that.
var loadLifecycleFacts = sync.OnceValues(func() (*lifecycleFacts, error) {
	return parseLifecycleFacts(nodeOSLifecycleYAML)
})

func parseLifecycleFacts(data []byte) (*lifecycleFacts, error) {
	var f lifecycleFacts
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("parsing node-os-lifecycle.yaml: %w", err)
	}
	t := f.Thresholds
	switch {
	case len(f.InPlaceUpdateOS) == 0 || len(f.PatchCoordinators) == 0 || f.AKSNodeImageLabel == "":
		return nil, fmt.Errorf("node-os-lifecycle.yaml: inPlaceUpdateOS, patchCoordinators and aksNodeImageLabel are required")
	case t.BehindFleetDays <= 0 || t.StaleDays <= 0 || t.RecentImageDays <= 0 || t.YoungNodeDays <= 0 ||
		t.MonocultureMinNodes < 2 || t.MonocultureShare <= 0.5 || t.MonocultureShare > 1:
		return nil, fmt.Errorf("node-os-lifecycle.yaml: thresholds out of range: %+v", t)
	}
	for _, c := range f.PatchCoordinators {
		if c.Name == "" || len(c.Match) == 0 || !strings.HasPrefix(c.Source, "https://") {
			return nil, fmt.Errorf("node-os-lifecycle.yaml: patch coordinator %q needs match and an https source", c.Name)
		}
	}
	for _, l := range f.LockedReleaseOS {
		if l.ID == "" || !strings.HasPrefix(l.Source, "https://") {
			return nil, fmt.Errorf("node-os-lifecycle.yaml: locked-release OS %q needs an id and an https source", l.ID)
		}
		if f.inPlaceListed(l.ID) {
			return nil, fmt.Errorf("node-os-lifecycle.yaml: %q is listed both as updating in place and as locked to a release", l.ID)
		}
	}
	return &f, nil
}

// updatesInPlace reports whether an OS changes packages in place on its
// own: listed as such, and not locked to its image's release.
func (f *lifecycleFacts) updatesInPlace(id string) bool {
	for _, l := range f.LockedReleaseOS {
		if l.ID == id {
			return false
		}
	}
	return f.inPlaceListed(id)
}

func (f *lifecycleFacts) inPlaceListed(id string) bool {
	for _, p := range f.InPlaceUpdateOS {
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(id, prefix) || p == id {
			return true
		}
	}
	return false
}

// parseAKSImageDate reads the date at the end of an AKS node image version:
// "AKSUbuntu-2204gen2containerd-202509.23.0" or "...-2022.01.19".
func parseAKSImageDate(v string) (time.Time, bool) {
	i := strings.LastIndexByte(v, '-')
	if i < 0 {
		return time.Time{}, false
	}
	parts := strings.Split(v[i+1:], ".")
	if len(parts) != 3 {
		return time.Time{}, false
	}
	var y, m, d int
	var err error
	atoi := func(s string) int {
		if err != nil {
			return 0
		}
		var n int
		n, err = strconv.Atoi(s)
		return n
	}
	switch len(parts[0]) {
	case 6: // YYYYMM.DD.patch
		y, m, d = atoi(parts[0][:4]), atoi(parts[0][4:]), atoi(parts[1])
	case 4: // YYYY.MM.DD
		y, m, d = atoi(parts[0]), atoi(parts[1]), atoi(parts[2])
	default:
		return time.Time{}, false
	}
	if err != nil || y < 2015 || m < 1 || m > 12 || d < 1 || d > 31 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return time.Time{}, false // 31 February
	}
	return t, true
}

func days(d time.Duration) int { return int(d.Hours() / 24) }

func daysOf(n int) time.Duration { return time.Duration(n) * 24 * time.Hour }

func runNodeOSLifecycle(ctx *check.Context, now time.Time) ([]finding.Finding, error) {
	facts, err := loadLifecycleFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the snapshot holds no nodes")
	}
	infos := check.IdentifyNodes(s.Nodes)
	reported := false
	for i := range s.Nodes {
		if s.Nodes[i].Status.NodeInfo.OSImage != "" {
			reported = true
			break
		}
	}
	if !reported {
		return nil, check.NotEvaluated("no node reports status.nodeInfo.osImage")
	}
	var out []finding.Finding
	out = append(out, endOfSupportFindings(ctx, infos, now)...)
	out = append(out, staleImageFindings(s.Nodes, facts, now)...)
	if f, ok := monocultureFinding(ctx, infos, facts, now); ok {
		out = append(out, f)
	}
	return out, nil
}

// supportEnd is when a node's OS release stops being supported, and whose
// word that is: the managed service's node image window where one is
// tabled, else the OS vendor's end of standard support.
type supportEnd struct {
	end      time.Time
	window   nodeos.Window // set when the provider's window decides
	provider nodeos.Provider
}

func nodeSupportEnd(n *corev1.Node, info nodeos.Info) (supportEnd, bool) {
	if !info.Known {
		return supportEnd{}, false
	}
	p := nodeos.ProviderOf(n.Spec.ProviderID, n.Labels)
	if w, ok := nodeos.ProviderWindow(p, info.Distro, info.Version); ok {
		return supportEnd{end: w.EndOfSupport, window: w, provider: p}, true
	}
	if info.EndOfStandardSupport.IsZero() {
		return supportEnd{}, false
	}
	return supportEnd{end: info.EndOfStandardSupport}, true
}

// imageCounts lists OS images with their node counts, most nodes first.
func imageCounts(counts map[string]int, quote bool) string {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		// The count is read before the name is quoted: counts is keyed by
		// the bare name ("(0 nodes)" was the quoted key's miss).
		n, name := counts[k], k
		if quote && !strings.HasPrefix(k, "(") {
			name = strconv.Quote(k)
		}
		parts[i] = fmt.Sprintf("%s (%d node%s)", name, n, check.PluralS(n))
	}
	return strings.Join(parts, ", ")
}

// providerNames are how messages name the managed services.
var providerNames = map[nodeos.Provider]string{nodeos.ProviderAKS: "AKS", nodeos.ProviderEKS: "EKS", nodeos.ProviderGKE: "GKE"}

func endOfSupportFindings(ctx *check.Context, infos check.NodeOS, now time.Time) []finding.Finding {
	nodes := ctx.Snapshot.Nodes
	type groupKey struct {
		id       string
		provider nodeos.Provider
	}
	byOS := map[groupKey][]*corev1.Node{}
	ends := map[groupKey]supportEnd{}
	unknownImage := map[string]int{} // osImage not in the table
	untabled := map[string]int{}     // known OS, no support end tabled
	for i := range nodes {
		n := &nodes[i]
		info := infos[n.Name]
		end, ok := nodeSupportEnd(n, info)
		switch {
		case !info.Known:
			img := n.Status.NodeInfo.OSImage
			if img == "" {
				img = "(no osImage"
				if os := n.Labels[corev1.LabelOSStable]; os != "" {
					img += ", " + corev1.LabelOSStable + "=" + os
				}
				img += ")"
			}
			unknownImage[img]++
			continue
		case !ok:
			untabled[info.Name()]++
			continue
		}
		// Support ends at the end of the given day.
		if now.After(end.end.Add(24 * time.Hour)) {
			k := groupKey{info.ID, end.provider}
			byOS[k] = append(byOS[k], n)
			ends[k] = end
		}
	}
	if len(unknownImage) > 0 {
		ctx.Unknowable(ruleOSEndOfSupport, "OS images kubegap does not recognise, so their support cannot be judged: %s", imageCounts(unknownImage, true))
	}
	if len(untabled) > 0 {
		ctx.Unknowable(ruleOSEndOfSupport, "no support end is tabled for %s", imageCounts(untabled, false))
	}
	keys := slices.SortedFunc(maps.Keys(byOS), func(a, b groupKey) int {
		return strings.Compare(a.id+"|"+string(a.provider), b.id+"|"+string(b.provider))
	})
	var out []finding.Finding
	for _, k := range keys {
		out = append(out, endOfSupportFinding(byOS[k], infos[byOS[k][0].Name], ends[k], now))
	}
	return out
}

func endOfSupportFinding(group []*corev1.Node, info nodeos.Info, end supportEnd, now time.Time) finding.Finding {
	eos := end.end.Format(time.DateOnly)
	refs, more := check.NodeRefs(group)
	f := finding.Finding{
		Check:    "node-os-lifecycle",
		Severity: finding.Medium,
		Objects:  refs,
		Cases:    []string{caseUbuntuSystemdDNS},
	}
	var what, ext, sources string
	if end.provider != nodeos.ProviderUnknown {
		svc := providerNames[end.provider]
		f.Title = fmt.Sprintf("%s %s, past %s's support for its node images (%s)", check.NodesRun(len(group), svc+" "), info.Name(), svc, eos)
		what = fmt.Sprintf("for which %s stopped producing node images and security patches on %s.", svc, eos)
		if r := end.window.ImagesRemoved; !r.IsZero() {
			if now.After(r.Add(24 * time.Hour)) {
				ext = fmt.Sprintf(" %s removed the node images on %s: scaling and reimaging these pools fail.", svc, r.Format(time.DateOnly))
			} else {
				ext = fmt.Sprintf(" %s removes the node images on %s; from then scaling and reimaging these pools fail.", svc, r.Format(time.DateOnly))
			}
		}
		sources = strings.Join(end.window.Sources, ", ")
		switch {
		case end.provider == nodeos.ProviderAKS && (end.window.Distro == "Ubuntu" || end.window.Distro == "CBL-Mariner"):
			// The AKS case is about these two Linux node images.
			f.Cases = append(f.Cases, caseAKSNodeOSRetired)
		case end.provider == nodeos.ProviderEKS && end.window.Distro == "Amazon Linux" && end.window.Version == "2":
			f.Cases = append(f.Cases, caseEKSAL2Retired)
		}
	} else {
		f.Title = fmt.Sprintf("%s %s, past end of standard support (%s)", check.NodesRun(len(group), ""), info.Name(), eos)
		what = fmt.Sprintf("whose vendor ended standard support on %s.", eos)
		switch {
		case info.EndOfExtendedSupport.IsZero():
		case now.After(info.EndOfExtendedSupport.Add(24 * time.Hour)):
			ext = fmt.Sprintf(" Extended support ended too, on %s.", info.EndOfExtendedSupport.Format(time.DateOnly))
		default:
			ext = fmt.Sprintf(" Only paid or volunteer extended support (Ubuntu Pro, Debian LTS and the like) continues, until %s.",
				info.EndOfExtendedSupport.Format(time.DateOnly))
		}
		sources = strings.Join(info.Sources, ", ")
	}
	libc := ""
	// Binaries linked on glibc 2.34 or later need GLIBC_2.34
	// (__libc_start_main), which is what broke the Azure CNI.
	if !info.Glibc.IsZero() && info.Glibc.Less(nodeos.Version{Major: 2, Minor: 34}) {
		libc = fmt.Sprintf(" Its glibc %s cannot run binaries that need GLIBC_2.34, as binaries built on current "+
			"distributions do; host-installed plugins break on such nodes first.", info.Glibc)
		f.Cases = append(f.Cases, caseAzureCNIGlibc)
	}
	f.Message = fmt.Sprintf("%s %s, %s%s%s%s", check.NodesRun(len(group), ""), info.Name(), what, ext, libc, check.MoreText(more))
	// Ages grow by themselves: they go in the evidence, so that the title
	// and message of an unchanged cluster stay the same from day to day.
	f.Evidence = append(f.Evidence, fmt.Sprintf("support ended %d days before this audit (%s)", days(now.Sub(end.end)), now.Format(time.DateOnly)))
	f.Remediation = fmt.Sprintf("Move these nodes to a supported OS release: create a node pool on a current image (or "+
		"change the pool's OS SKU), move workloads with a surge, then remove the old pool. Sources for the date: %s.", sources)
	var images finding.Grouper
	for _, n := range group {
		images.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage))
	}
	f.AddEvidence(images.Items()...)
	if end.provider != nodeos.ProviderUnknown {
		// The provider is read from spec.providerID and the node's labels
		// (check.ManagedProvider); the IDs are per node, so only the
		// first few are quoted.
		for i, n := range group {
			if i == 3 {
				f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more %s nodes", len(group)-i, providerNames[end.provider]))
				break
			}
			f.AddEvidence(finding.Quote(check.NodeRef(n.Name), finding.Value("spec.providerID", n.Spec.ProviderID)))
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s on %s: node image support ended %s", info.Name(), providerNames[end.provider], eos))
	} else {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%s: standard support ended %s", info.Name(), eos))
	}
	return f
}

type agedNode struct {
	node  *corev1.Node
	image string
	date  time.Time
}

func staleImageFindings(nodes []corev1.Node, facts *lifecycleFacts, now time.Time) []finding.Finding {
	var aged []agedNode
	var newest time.Time
	for i := range nodes {
		v := nodes[i].Labels[facts.AKSNodeImageLabel]
		d, ok := parseAKSImageDate(v)
		if !ok {
			continue
		}
		aged = append(aged, agedNode{node: &nodes[i], image: v, date: d})
		if d.After(newest) {
			newest = d
		}
	}
	th := facts.Thresholds
	type group struct {
		sev   finding.Severity
		nodes []agedNode
	}
	groups := map[string]*group{}
	for _, a := range aged {
		behind := newest.Sub(a.date) > daysOf(th.BehindFleetDays)
		stale := now.Sub(a.date) > daysOf(th.StaleDays) &&
			!a.node.CreationTimestamp.IsZero() && now.Sub(a.node.CreationTimestamp.Time) > daysOf(th.StaleDays)
		var sev finding.Severity
		switch {
		case behind:
			sev = finding.Medium
		case stale:
			sev = finding.Low
		default:
			continue
		}
		key := check.NodePool(a.node)
		g := groups[key]
		if g == nil {
			g = &group{}
			groups[key] = g
		}
		g.sev = max(g.sev, sev)
		g.nodes = append(g.nodes, a)
	}
	keys := slices.Sorted(maps.Keys(groups))
	var out []finding.Finding
	for _, k := range keys {
		g := groups[k]
		where := "Nodes without a pool label"
		if k != "" {
			where = "Node pool " + k
		}
		ptrs := make([]*corev1.Node, len(g.nodes))
		oldest := g.nodes[0].date
		images := map[string]int{}
		for i, a := range g.nodes {
			ptrs[i] = a.node
			images[a.image]++
			if a.date.Before(oldest) {
				oldest = a.date
			}
		}
		refs, more := check.NodeRefs(ptrs)
		f := finding.Finding{
			Check:    "node-os-lifecycle",
			Severity: g.sev,
			Objects:  refs,
			Cases:    []string{caseUbuntuSystemdDNS, caseHWEKernelPanic},
		}
		f.Title = fmt.Sprintf("%s runs a node image from %s", where, oldest.Format("2006-01"))
		f.Evidence = append(f.Evidence, fmt.Sprintf("oldest node image %d days old at this audit (%s)",
			days(now.Sub(oldest)), now.Format(time.DateOnly)))
		image := check.CountsText(images)
		if len(images) == 1 {
			image = g.nodes[0].image
		}
		var stale, behind int
		for _, a := range g.nodes {
			if now.Sub(a.node.CreationTimestamp.Time) > daysOf(th.StaleDays) {
				stale++
			}
		}
		behind = len(g.nodes) - stale
		f.Message = fmt.Sprintf("%s: %s node image %s, built %s.", where, check.NodesRun(len(g.nodes), ""), image, oldest.Format(time.DateOnly))
		if stale > 0 {
			f.Message += fmt.Sprintf(" Nodes in it have been up for more than %d days: their OS packages have changed in place "+
				"since (unattended upgrades or a security patch channel), outside any staged rollout, or not at all.", th.StaleDays)
			f.Evidence = append(f.Evidence, fmt.Sprintf("%d of %d nodes up for more than %d days at this audit", stale, len(g.nodes), th.StaleDays))
		}
		if g.sev == finding.Medium {
			f.Message += fmt.Sprintf(" The newest node image in the cluster is from %s: this pool was left behind when others moved on",
				newest.Format(time.DateOnly))
			if behind > 0 {
				f.Message += ", and its new nodes still start from the old image"
			}
			f.Message += "."
		}
		f.Message += check.MoreText(more)
		f.Remediation = "Upgrade the pool's node image (az aks nodepool upgrade --node-image-only) and pick a node OS upgrade " +
			"channel (NodeImage) with a maintenance window, so that OS changes arrive as tested images, pool by pool, instead of " +
			"in place on every node at once."
		for i, a := range g.nodes {
			if i == check.MaxEvidence {
				f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more nodes", len(g.nodes)-i))
				break
			}
			f.AddEvidence(finding.Quote(check.NodeRef(a.node.Name), finding.Value("metadata.labels["+facts.AKSNodeImageLabel+"]", a.image),
				createdField(a.node)))
		}
		f.Evidence = append(f.Evidence, "image dates are read from the "+facts.AKSNodeImageLabel+" label's version (AKSUbuntu-…-YYYYMM.DD.n)")
		if g.sev == finding.Medium {
			f.Evidence = append(f.Evidence, fmt.Sprintf("newest %s in the cluster: %s", facts.AKSNodeImageLabel, newest.Format(time.DateOnly)))
		}
		out = append(out, f)
	}
	return out
}

// monocultureFinding reports a fleet on one in-place-updated OS image and
// kernel with nothing staging its updates.
func monocultureFinding(ctx *check.Context, infos check.NodeOS, facts *lifecycleFacts, now time.Time) (finding.Finding, bool) {
	s := ctx.Snapshot
	th := facts.Thresholds
	if len(s.Nodes) < th.MonocultureMinNodes {
		return finding.Finding{}, false
	}
	type tuple struct{ osImage, kernel string }
	counts := map[tuple][]*corev1.Node{}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		k := tuple{n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion}
		counts[k] = append(counts[k], n)
	}
	var top tuple
	for k, ns := range counts {
		if len(ns) > len(counts[top]) || len(ns) == len(counts[top]) && k.osImage+k.kernel < top.osImage+top.kernel {
			top = k
		}
	}
	same := counts[top]
	share := float64(len(same)) / float64(len(s.Nodes))
	if share < th.MonocultureShare {
		return finding.Finding{}, false
	}
	info := infos[same[0].Name]
	if !info.Known {
		ctx.Unknowable(rulePatchMonoculture, "%d of %d nodes run OS image %q, which kubegap does not recognise: whether it updates in place is unknown",
			len(same), len(s.Nodes), top.osImage)
		return finding.Finding{}, false
	}
	if !facts.updatesInPlace(info.ID) {
		return finding.Finding{}, false
	}
	// Without any DaemonSet or Deployment, "no patch coordinator" cannot
	// be told at all.
	dsSeen, depSeen := ctx.Present(snapshot.DaemonSets), ctx.Present(snapshot.Deployments)
	if !dsSeen && !depSeen {
		ctx.Incomplete(rulePatchMonoculture, "%d of %d nodes run %q, updated in place, but neither DaemonSets nor Deployments are in the input: "+
			"whether a patch coordinator runs is unknown", len(same), len(s.Nodes), top.osImage)
		return finding.Finding{}, false
	}
	if patchCoordinator(s, facts) {
		return finding.Finding{}, false
	}
	young, undated := 0, 0
	var newestImage time.Time
	for _, n := range same {
		switch {
		case n.CreationTimestamp.IsZero():
			undated++
		case now.Sub(n.CreationTimestamp.Time) < daysOf(th.YoungNodeDays):
			young++
		}
		if d, ok := parseAKSImageDate(n.Labels[facts.AKSNodeImageLabel]); ok && d.After(newestImage) {
			newestImage = d
		}
	}
	// Nodes being replaced, or node images being refreshed, are a managed
	// rollout: updates arrive as images, not in place.
	if young*2 >= len(same) {
		return finding.Finding{}, false
	}
	if !newestImage.IsZero() && now.Sub(newestImage) < daysOf(th.RecentImageDays) {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(same)
	var names []string
	for _, c := range facts.PatchCoordinators {
		names = append(names, c.Name)
	}
	// Open world: only complete inputs show that no coordinator runs; else
	// the finding says what was looked at and what could not be.
	complete := ctx.Complete(snapshot.DaemonSets) && ctx.Complete(snapshot.Deployments)
	var looked, unseen []string
	for _, k := range []struct {
		r    snapshot.Resource
		seen bool
	}{{snapshot.DaemonSets, dsSeen}, {snapshot.Deployments, depSeen}} {
		switch {
		case ctx.Complete(k.r):
			looked = append(looked, "every "+k.r.Kind)
		case k.seen:
			looked = append(looked, "the "+k.r.Kind+"s in the input")
			unseen = append(unseen, k.r.Kind+"s beyond those in the input")
		default:
			unseen = append(unseen, k.r.Kind+"s (not in the input)")
		}
	}
	coordinator := "with no patch coordinator"
	if !complete {
		coordinator = "with no patch coordinator in the input"
		ctx.Incomplete(rulePatchMonoculture, "a patch coordinator among %s could not be ruled out", strings.Join(unseen, " or "))
	}
	f := finding.Finding{
		Check:    "node-os-lifecycle",
		Severity: finding.Low,
		Title: fmt.Sprintf("%d of %d nodes run one OS image and kernel (%s, %s) updated in place, %s",
			len(same), len(s.Nodes), top.osImage, top.kernel, coordinator),
		Objects: refs,
		Cases:   []string{caseUbuntuSystemdDNS, caseDatadogNetworkd, caseHWEKernelPanic, caseAllNodesRebooted},
	}
	nothing := "Nothing in the cluster stages those changes: no patch coordinator runs and no node image was refreshed recently."
	then := "An automatic package update therefore"
	if !complete {
		then = "Unless such a coordinator runs, an automatic package update"
		nothing = fmt.Sprintf("No patch coordinator is among %s, and no node image was refreshed recently; %s were not seen, so a "+
			"coordinator there cannot be ruled out.", strings.Join(looked, " and "), strings.Join(unseen, " and "))
	}
	// Nodes without a creationTimestamp (files that omit it) are of
	// unknown age: not counted as old, though they do not make the fleet
	// young either.
	age := fmt.Sprintf("%d of them are older than %d days", len(same)-young-undated, th.YoungNodeDays)
	if undated > 0 {
		age += fmt.Sprintf(" (%d give no creationTimestamp)", undated)
	}
	f.Message = fmt.Sprintf("%d of %d nodes (%.0f%%) run %q with kernel %s, an OS that changes packages in place, and %s. "+
		"%s %s reaches every node in the same window, so one bad systemd, "+
		"networkd or kernel package can take down the whole fleet at once rather than one pool%s.",
		len(same), len(s.Nodes), share*100, top.osImage, top.kernel, age, nothing, then, check.MoreText(more))
	f.Remediation = "Deliver OS changes as node images, pool by pool: on AKS set the node OS upgrade channel to NodeImage with a " +
		"maintenance window; elsewhere replace nodes from new images (managed node group updates, Karpenter drift) or run a " +
		"coordinator such as kured with unattended upgrades staged per pool. Keep at least two pools on different image " +
		"versions so a bad update can be stopped before it reaches all of them."
	var fleet finding.Grouper
	for _, n := range same {
		fleet.Add(check.NodeRef(n.Name), finding.Value("status.nodeInfo.osImage", top.osImage), finding.Value("status.nodeInfo.kernelVersion", top.kernel))
	}
	f.AddEvidence(fleet.Items()...)
	f.Evidence = append(f.Evidence, fmt.Sprintf("%d of the %d nodes in the input; %s at this audit", len(same), len(s.Nodes), age))
	for i, n := range same {
		if i == 5 {
			f.Evidence = append(f.Evidence, fmt.Sprintf("… and %d more nodes", len(same)-i))
			break
		}
		f.AddEvidence(finding.Quote(check.NodeRef(n.Name), createdField(n)))
	}
	if complete {
		f.Evidence = append(f.Evidence, "no DaemonSet or Deployment matches a patch coordinator ("+strings.Join(names, ", ")+")")
	} else {
		f.Evidence = append(f.Evidence, fmt.Sprintf("none of %s matches a patch coordinator (%s); unknown: %s",
			strings.Join(looked, " and "), strings.Join(names, ", "), strings.Join(unseen, ", ")))
	}
	if !newestImage.IsZero() {
		f.Evidence = append(f.Evidence, fmt.Sprintf("newest %s: %s", facts.AKSNodeImageLabel, newestImage.Format(time.DateOnly)))
	}
	return f, true
}

// patchCoordinator finds a DaemonSet or Deployment that stages node OS
// updates, by name or image repository.
func patchCoordinator(s *snapshot.Snapshot, facts *lifecycleFacts) bool {
	matches := func(name string, spec *corev1.PodSpec) bool {
		for _, c := range facts.PatchCoordinators {
			for _, m := range c.Match {
				if strings.Contains(name, m) {
					return true
				}
				for _, ct := range spec.Containers {
					if strings.Contains(check.ImageRepository(ct.Image), m) {
						return true
					}
				}
			}
		}
		return false
	}
	for i := range s.DaemonSets {
		if matches(s.DaemonSets[i].Name, &s.DaemonSets[i].Spec.Template.Spec) {
			return true
		}
	}
	for i := range s.Deployments {
		if matches(s.Deployments[i].Name, &s.Deployments[i].Spec.Template.Spec) {
			return true
		}
	}
	return false
}

// createdField quotes a node's creationTimestamp as the API writes it
// (RFC 3339, UTC), or its absence.
func createdField(n *corev1.Node) finding.Field {
	if n.CreationTimestamp.IsZero() {
		return finding.Absent("metadata.creationTimestamp")
	}
	return finding.Value("metadata.creationTimestamp", n.CreationTimestamp.UTC().Format(time.RFC3339))
}
