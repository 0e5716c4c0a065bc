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
