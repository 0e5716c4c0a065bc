package runtime

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	caseCRIv1          = "kubelet-126-cri-v1alpha2-removed-old-containerd-2023"
	caseRuncCVE        = "runc-leaky-vessels-cve-2024-21626"
	maxRuntimeEvidence = 10
	runtimeCompatID    = "runtime-kubelet-compat"
	ruleCRIv1          = "cri-v1"
	ruleRecommended    = "containerd-recommended-patch"
	ruleEndOfLife      = "containerd-end-of-life"
	ruleDockershim     = "dockershim-removed"
)

//go:embed data/runtime-kubelet-compat.yaml
var runtimeCompatData []byte

type runtimeCompatFacts struct {
	CRIv1 []struct {
		ID          string   `json:"id"`
		Runtime     string   `json:"runtime"`
		KubeletFrom string   `json:"kubeletFrom"`
		Line        string   `json:"line"`
		Below       string   `json:"below"`
		Severity    string   `json:"severity"`
		Sources     []string `json:"sources"`
	} `json:"criV1"`
	Recommended []struct {
		Kubelet  string   `json:"kubelet"`
		Minimums []string `json:"minimums"`
		Sources  []string `json:"sources"`
	} `json:"recommended"`
	EndOfLife []struct {
		Line    string   `json:"line"`
		End     string   `json:"end"`
		Sources []string `json:"sources"`
	} `json:"endOfLife"`
	Dockershim []struct {
		RemovedIn string   `json:"removedIn"`
		Sources   []string `json:"sources"`
	} `json:"dockershim"`
}

var loadRuntimeCompat = check.Facts("data/runtime-kubelet-compat.yaml", runtimeCompatData, func(f *runtimeCompatFacts) error {
	for _, r := range f.CRIv1 {
		if _, ok := check.ParseKubeVersion(r.Below); !ok {
			return fmt.Errorf("data/runtime-kubelet-compat.yaml: %s: bad version %q", r.ID, r.Below)
		}
	}
	for _, e := range f.EndOfLife {
		if _, err := time.Parse(time.DateOnly, e.End); err != nil {
			return fmt.Errorf("data/runtime-kubelet-compat.yaml: line %s: %w", e.Line, err)
		}
	}
	return nil
})

// runtimeKubeletCompatCheck compares each node's container runtime with
// its kubelet: runtimes the kubelet cannot use (CRI v1 from 1.26, no
// dockershim from 1.24), containerd patches below what containerd
// recommends for the kubelet's minor, and containerd lines past their end
// of life.
func runtimeKubeletCompatCheck() check.Check { return runtimeKubeletCompatCheckAt(time.Now) }

func runtimeKubeletCompatCheckAt(now func() time.Time) check.Check {
	return check.Check{
		ID:       runtimeCompatID,
		Title:    "Container runtimes the kubelet cannot use, or that their project no longer supports",
		Severity: finding.High,
		Description: "Reads each node's status.nodeInfo.containerRuntimeVersion and kubeletVersion. Kubelet 1.26 and later " +
			"need CRI v1: containerd before 1.6.0 serves only v1alpha2 and the kubelet does not start (high); 1.6.0 to 1.6.14 " +
			"is outside containerd's own support matrix for 1.26+ (medium). containerd patches below the minimum containerd " +
			"recommends for the kubelet's minor (its Kubernetes support matrix, 1.30 to 1.33) are low, as are containerd lines " +
			"past their end of life in containerd's release table (info on AKS, EKS and GKE nodes, whose providers patch " +
			"their own builds). docker:// on a kubelet of 1.24 or later runs through cri-dockerd, which the API does not " +
			"version (medium from 1.26, where old cri-dockerd lacked CRI v1; low before); docker:// on an older kubelet " +
			"blocks the upgrade to 1.24. CRI-O versions are not judged (the rule is partial when CRI-O nodes exist). Vendor " +
			"build suffixes are ignored, so backported fixes in distribution packages are not seen.",
		Reads: check.Needs(snapshot.Nodes),
		Rules: []check.Rule{
			{ID: ruleCRIv1, Summary: "every runtime serves the CRI version its kubelet needs", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleRecommended, Summary: "containerd at or above the patch containerd recommends for the kubelet's minor",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleEndOfLife, Summary: "no containerd line past its end of life", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleDockershim, Summary: "no node depends on dockershim or an unversioned cri-dockerd", Needs: []snapshot.Resource{snapshot.Nodes}},
		},
		Cases: []string{caseCRIv1, caseDockerSock, caseRuncCVE},
		Run:   func(ctx *check.Context) ([]finding.Finding, error) { return runRuntimeKubeletCompat(ctx, now()) },
	}
}

// runtimeGroup collects the nodes one finding is about.
type runtimeGroup struct {
	f     finding.Finding
	nodes []*corev1.Node
}

func runRuntimeKubeletCompat(ctx *check.Context, now time.Time) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadRuntimeCompat()
	if err != nil {
		return nil, err
	}
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes")
	}
	groups := map[string]*runtimeGroup{}
	var keys []string
	group := func(key string, n *corev1.Node, mk func() finding.Finding) {
		g := groups[key]
		if g == nil {
			g = &runtimeGroup{f: mk()}
			groups[key] = g
			keys = append(keys, key)
		}
		g.nodes = append(g.nodes, n)
	}
	var unreported, crio, other, unparsed int
	for i := range s.Nodes {
		n := &s.Nodes[i]
		rt, ok := runtimeOf(n)
		kubelet, kok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok || !kok {
			unreported++
			continue
		}
		pool := check.NodePool(n)
		provider := check.ManagedProvider(n)
		switch rt.Name {
		case "containerd":
			if !rt.Parsed {
				unparsed++
				continue
			}
			containerdRules(facts, n, rt, kubelet, pool, provider, now, group)
		case "docker":
			dockerRules(facts, n, rt, kubelet, pool, group)
		case "cri-o":
			crio++
		default:
			other++
		}
	}
	if unreported > 0 {
		for _, r := range []string{ruleCRIv1, ruleRecommended, ruleEndOfLife, ruleDockershim} {
			ctx.Incomplete(r, "%s report no runtime or kubelet version", check.Plural(unreported, "node", "nodes"))
		}
	}
	if unparsed > 0 {
		for _, r := range []string{ruleCRIv1, ruleRecommended, ruleEndOfLife} {
			ctx.Incomplete(r, "%s report a containerd version kubegap cannot read", check.Plural(unparsed, "node", "nodes"))
		}
	}
	if crio+other > 0 {
		ctx.Incomplete(ruleCRIv1, "%s run CRI-O or another runtime whose versions this check does not judge",
			check.Plural(crio+other, "node", "nodes"))
	}
	sort.Strings(keys)
	out := make([]finding.Finding, 0, len(keys))
	for _, k := range keys {
		g := groups[k]
		sort.Slice(g.nodes, func(i, j int) bool { return g.nodes[i].Name < g.nodes[j].Name })
		f := g.f
		refs, more := check.NodeRefs(g.nodes)
		f.Objects = append(f.Objects, refs...)
		f.Message += check.MoreText(more)
		// Each node's own versions, grouped by value: the nodes of one
		// finding share a rule, not necessarily a version.
		rules := f.Evidence
		f.Evidence = nil
		var versions finding.Grouper
		for _, n := range g.nodes {
			versions.Add(check.NodeRef(n.Name),
				finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion),
				finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion))
		}
		f.AddEvidence(versions.Items()...)
		f.Evidence = append(f.Evidence, rules...)
		f.Title = fmt.Sprintf(f.Title, check.Plural(len(g.nodes), "node", "nodes"))
		out = append(out, f)
	}
	return out, nil
}

func where(pool string) string {
	if pool == "" {
		return "nodes without a pool label"
	}
	return "pool " + pool
}

func containerdRules(facts *runtimeCompatFacts, n *corev1.Node, rt nodeRuntime, kubelet check.KubeVersion, pool, provider string,
	now time.Time, group func(string, *corev1.Node, func() finding.Finding)) {
	line := rt.Version.MinorString()
	for _, r := range facts.CRIv1 {
		from, _ := check.ParseKubeVersion(r.KubeletFrom)
		below, _ := check.ParseKubeVersion(r.Below)
		if kubelet.Less(from) || !rt.Version.Less(below) || (r.Line != "" && r.Line != line) {
			continue
		}
		key := fmt.Sprintf("0|%s|%s|%s|%s", r.ID, rt.Raw, kubelet.MinorString(), pool)
		group(key, n, func() finding.Finding {
			f := finding.Finding{Check: runtimeCompatID, Cases: []string{caseCRIv1},
				Evidence: []string{"rule " + r.ID + " (" + strings.Join(r.Sources, " ") + ")"}}
			if r.Severity == "high" {
				f.Severity = finding.High
				f.Title = fmt.Sprintf("containerd %s cannot serve kubelet %s on %%s (%s)", rt.Raw, kubelet.MinorString(), where(pool))
				f.Message = fmt.Sprintf("These nodes run kubelet %s on containerd %s. Kubernetes 1.26 removed CRI v1alpha2 and the "+
					"kubelet now needs CRI v1, which containerd before 1.6 does not serve: the kubelet exits at start with "+
					"'unknown service runtime.v1.RuntimeService' and the node goes NotReady at its next kubelet restart.",
					kubelet.MinorString(), rt.Raw)
				f.Remediation = "Upgrade containerd to 1.7 or 2.x (1.6.15 or later at the very least) on these nodes before the " +
					"kubelet restarts, or replace them with nodes from a current image. Upgrade the runtime before the kubelet."
			} else {
				f.Severity = finding.Medium
				f.Title = fmt.Sprintf("containerd %s is outside containerd's support matrix for kubelet %s on %%s (%s)", rt.Raw, kubelet.MinorString(), where(pool))
				f.Message = fmt.Sprintf("These nodes run kubelet %s on containerd %s. containerd's own matrix lists 1.6.15+ (or 1.7+) for "+
					"Kubernetes 1.26 and later; earlier 1.6 patches were not qualified for kubelets without CRI v1alpha2.",
					kubelet.MinorString(), rt.Raw)
				f.Remediation = "Upgrade containerd on these nodes to the patch containerd recommends for this Kubernetes minor, or to a supported line."
			}
			return f
		})
	}
	for _, r := range facts.Recommended {
		if r.Kubelet != kubelet.MinorString() {
			continue
		}
		for _, m := range r.Minimums {
			min, ok := check.ParseKubeVersion(m)
			if !ok || min.MinorString() != line || !rt.Version.Less(min) {
				continue
			}
			key := fmt.Sprintf("1|%s|%s|%s", rt.Raw, kubelet.MinorString(), pool)
			group(key, n, func() finding.Finding {
				return finding.Finding{Check: runtimeCompatID, Severity: finding.Low, Cases: []string{caseCRIv1},
					Title: fmt.Sprintf("containerd %s is below the %s patch containerd recommends for Kubernetes %s on %%s (%s)",
						rt.Raw, m, kubelet.MinorString(), where(pool)),
					Message: fmt.Sprintf("containerd's Kubernetes support matrix recommends containerd %s or later on the %s line for "+
						"Kubernetes %s: those are the patches tested most thoroughly with it. This is a recommendation missed, not a "+
						"known failure.", m, line, kubelet.MinorString()),
					Remediation: "Move these nodes to a node image or package with the recommended containerd patch at the next node rollout.",
					Evidence: []string{fmt.Sprintf("containerd's matrix for Kubernetes %s: %s (%s)", r.Kubelet,
						strings.Join(r.Minimums, ", "), strings.Join(r.Sources, " "))}}
			})
		}
	}
	for _, e := range facts.EndOfLife {
		end, _ := time.Parse(time.DateOnly, e.End)
		if e.Line != line || now.Before(end) {
			continue
		}
		// One finding per line (and provider): an end of life is a fleet
		// fact, not a pool's; the nodes list says where.
		key := fmt.Sprintf("2|%s|%s", line, provider)
		group(key, n, func() finding.Finding {
			// The case is the kind of fix an ended line misses: runc's
			// CVE-2024-21626 fix reached containerd's release builds on the
			// lines then supported (1.6.28, 1.7.13), not on 1.5, ended in
			// February 2023.
			f := finding.Finding{Check: runtimeCompatID, Severity: finding.Low, Cases: []string{caseRuncCVE},
				Title: fmt.Sprintf("containerd %s reached end of life on %s on %%s", line, e.End),
				Message: fmt.Sprintf("These nodes run containerd %s; containerd's release table ends support for "+
					"the %s line on %s. Bugs and security fixes no longer land upstream (the runc fix for CVE-2024-21626 "+
					"shipped in containerd 1.6.28 and 1.7.13, the lines supported then), and future kubelets are qualified "+
					"against newer lines.", line, line, e.End),
				Remediation: "Plan the move to a supported containerd line with the next node image; on containerd 2.x, check the " +
					"removed configuration keys and Docker schema 1 images first.",
				Evidence: []string{fmt.Sprintf("containerd's release table: the %s line's end of life is %s (%s)",
					line, e.End, strings.Join(e.Sources, " "))}}
			if provider != "" {
				f.Severity = finding.Info
				f.Message += fmt.Sprintf(" These are %s nodes: the provider ships and patches its own containerd build, so follow its "+
					"node image releases rather than containerd's table.", provider)
			}
			return f
		})
	}
}

func dockerRules(facts *runtimeCompatFacts, n *corev1.Node, rt nodeRuntime, kubelet check.KubeVersion, pool string,
	group func(string, *corev1.Node, func() finding.Finding)) {
	if len(facts.Dockershim) == 0 {
		return
	}
	removed, _ := check.ParseKubeVersion(facts.Dockershim[0].RemovedIn)
	cri126 := check.KubeVersion{Major: 1, Minor: 26}
	key := fmt.Sprintf("3|%s|%s|%s", rt.Raw, kubelet.MinorString(), pool)
	group(key, n, func() finding.Finding {
		f := finding.Finding{Check: runtimeCompatID, Cases: []string{caseCRIv1, caseDockerSock},
			Evidence: []string{"dockershim removed in Kubernetes " + removed.MinorString() + " (" + strings.Join(facts.Dockershim[0].Sources, " ") + ")"}}
		switch {
		case kubelet.Less(removed):
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("Docker %s through dockershim on kubelet %s blocks the upgrade to %s on %%s (%s)",
				rt.Raw, kubelet.MinorString(), removed.MinorString(), where(pool))
			f.Message = fmt.Sprintf("These nodes run Docker through the kubelet's built-in dockershim, which Kubernetes %s removed. "+
				"They cannot take a %s kubelet without a runtime change (containerd, CRI-O, or Docker through cri-dockerd), "+
				"and workloads that mount the Docker socket break at that change.", removed.MinorString(), removed.MinorString())
			f.Remediation = "Move these nodes to containerd or CRI-O (or install cri-dockerd) before upgrading them to " +
				removed.MinorString() + "; inventory Docker socket mounts first (check docker-socket-coupling)."
		case !kubelet.Less(cri126):
			f.Severity = finding.Medium
			f.Title = fmt.Sprintf("Docker %s on kubelet %s runs through cri-dockerd, whose CRI version the API does not show, on %%s (%s)",
				rt.Raw, kubelet.MinorString(), where(pool))
			f.Message = "From 1.24 a node reporting docker:// runs Docker through cri-dockerd, an adapter outside Kubernetes. " +
				"From 1.26 the kubelet needs CRI v1, and cri-dockerd releases of that time did not serve it, so kubelets failed to " +
				"start after the upgrade. The API does not report cri-dockerd's version: check it on the nodes."
			f.Remediation = "Keep cri-dockerd on a release that serves CRI v1 and upgrade it with every kubelet minor, or move the nodes to containerd or CRI-O."
		default:
			f.Severity = finding.Low
			f.Title = fmt.Sprintf("Docker %s on kubelet %s depends on cri-dockerd on %%s (%s)", rt.Raw, kubelet.MinorString(), where(pool))
			f.Message = "These nodes run Docker through cri-dockerd, an adapter outside Kubernetes since dockershim's removal in 1.24. " +
				"Its version is not visible through the API, and kubelet 1.26 needs a cri-dockerd that serves CRI v1."
			f.Remediation = "Upgrade cri-dockerd before the kubelet reaches 1.26, or move the nodes to containerd or CRI-O."
		}
		return f
	})
}
