package upgrade

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/nodeos"
)

// Rules and cases of what the target's kubelet needs from the node: its
// container runtime and an OS the provider still offers at the target.
const (
	ruleRuntimeAtTarget = "runtime-at-target"
	ruleNodeOSAtTarget  = "node-os-at-target"

	caseCRIv1          = "kubelet-126-cri-v1alpha2-removed-old-containerd-2023"
	caseDockershimSock = "aks-119-containerd-switch-breaks-docker-sock-mounts-2021"
)

// containerdFloor is one row of runtimeAtTarget.containerdBelow.
type containerdFloor struct {
	KubeletFrom string   `json:"kubeletFrom"`
	Below       string   `json:"below"`
	Sources     []string `json:"sources"`

	kubeletFrom, below check.KubeVersion
}

type runtimeAtTargetFacts struct {
	ContainerdBelow     []containerdFloor `json:"containerdBelow"`
	DockershimRemovedIn struct {
		Minor   string   `json:"minor"`
		Sources []string `json:"sources"`
	} `json:"dockershimRemovedIn"`

	dockershimRemoved check.KubeVersion
}

// nodeOSRow is an OS release a provider does not offer from a minor on.
type nodeOSRow struct {
	Provider string   `json:"provider"`
	Distro   string   `json:"distro"`
	Version  string   `json:"version"`
	From     string   `json:"from"`
	Case     string   `json:"case"`
	Note     string   `json:"note"`
	Sources  []string `json:"sources"`

	from check.KubeVersion
}

// parseNodeRequirements validates the runtime and node-OS sections: every
// row sourced with https URLs and its versions readable.
func parseNodeRequirements(f *facts) error {
	rt := &f.RuntimeAtTarget
	for i := range rt.ContainerdBelow {
		r := &rt.ContainerdBelow[i]
		from, ok1 := check.ParseKubeVersion(r.KubeletFrom)
		below, ok2 := check.ParseKubeVersion(r.Below)
		if !ok1 || !ok2 {
			return fmt.Errorf("upgrade-facts.yaml: runtimeAtTarget.containerdBelow %q: kubeletFrom and below are required", r.Below)
		}
		if err := sourced("upgrade-facts.yaml", "runtimeAtTarget containerd below "+r.Below, r.Sources); err != nil {
			return err
		}
		r.kubeletFrom, r.below = from, below
	}
	if d := rt.DockershimRemovedIn; d.Minor != "" {
		v, ok := check.ParseKubeVersion(d.Minor)
		if !ok {
			return fmt.Errorf("upgrade-facts.yaml: runtimeAtTarget.dockershimRemovedIn.minor %q is not a version", d.Minor)
		}
		if err := sourced("upgrade-facts.yaml", "runtimeAtTarget.dockershimRemovedIn", d.Sources); err != nil {
			return err
		}
		rt.dockershimRemoved = v
	}
	for i := range f.NodeOSAtTarget {
		r := &f.NodeOSAtTarget[i]
		v, ok := check.ParseKubeVersion(r.From)
		if !ok || r.Provider == "" || r.Distro == "" || r.Version == "" || r.Case == "" {
			return fmt.Errorf("upgrade-facts.yaml: nodeOSAtTarget %s %s %s: provider, distro, version, from and case are required", r.Provider, r.Distro, r.Version)
		}
		if err := sourced("upgrade-facts.yaml", "nodeOSAtTarget "+r.Provider+" "+r.Distro+" "+r.Version, r.Sources); err != nil {
			return err
		}
		r.from = v
	}
	return nil
}

// poolGroup collects the nodes of one pool that one finding is about.
type poolGroup struct {
	pool  string
	what  string // the runtime or OS they share
	nodes []*corev1.Node
}

// grouped returns the groups in a stable order: by pool, then what.
func grouped(m map[string]*poolGroup) []*poolGroup {
	var out []*poolGroup
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

func add(m map[string]*poolGroup, pool, what string, n *corev1.Node) {
	k := pool + "\x00" + what
	if m[k] == nil {
		m[k] = &poolGroup{pool: pool, what: what}
	}
	m[k].nodes = append(m[k].nodes, n)
}

func poolWhere(pool string) string {
	if pool == "" {
		return "nodes without a pool label"
	}
	return "pool " + pool
}

// runtimeAtTarget finds nodes whose container runtime cannot serve the
// target's kubelet: containerd without CRI v1 from 1.26, Docker through the
// removed dockershim from 1.24, and Docker through a cri-dockerd that must
// serve CRI v1 from 1.26.
func runtimeAtTarget(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	rt := f.RuntimeAtTarget
	oldContainerd, dockershim, criDockerd := map[string]*poolGroup{}, map[string]*poolGroup{}, map[string]*poolGroup{}
	floor := map[string]containerdFloor{}
	cri126 := check.KubeVersion{Major: 1, Minor: 26}
	var unreported, unjudged int
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !belowTarget(n, t) {
			continue // its kubelet already runs the target
		}
		raw := n.Status.NodeInfo.ContainerRuntimeVersion
		name, version, found := strings.Cut(raw, "://")
		kubelet, kok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !found || !kok {
			unreported++
			continue
		}
		pool := check.NodePool(n)
		switch name {
		case "containerd":
			v, ok := check.ParseKubeVersion(version)
			if !ok {
				unjudged++
				continue
			}
			for _, r := range rt.ContainerdBelow {
				if !t.Less(r.kubeletFrom) && v.Less(r.below) {
					add(oldContainerd, pool, raw, n)
					floor[raw] = r
					break
				}
			}
		case "docker":
			if rt.dockershimRemoved == (check.KubeVersion{}) || t.Less(rt.dockershimRemoved) {
				continue
			}
			switch {
			case kubelet.Less(rt.dockershimRemoved):
				// No cri-dockerd can be inferred: the kubelet still
				// talks to Docker through its own dockershim.
				add(dockershim, pool, raw, n)
			case kubelet.Less(cri126) && !t.Less(cri126):
				add(criDockerd, pool, raw, n)
			}
		default:
			unjudged++
		}
	}
	if unreported > 0 {
		ctx.Incomplete(ruleRuntimeAtTarget, "%s report no container runtime or kubelet version", check.Plural(unreported, "node", "nodes"))
	}
	if unjudged > 0 {
		ctx.Incomplete(ruleRuntimeAtTarget, "%s run a runtime or version kubegap's table does not judge (CRI-O or unreadable)",
			check.Plural(unjudged, "node", "nodes"))
	}
	var out []finding.Finding
	for _, g := range grouped(oldContainerd) {
		r := floor[g.what]
		fd := nodeGroupFinding(g, finding.High,
			fmt.Sprintf("%s on %s cannot serve kubelet %s", g.what, poolWhere(g.pool), t.MinorString()),
			fmt.Sprintf("From %s the kubelet talks CRI v1 only, and containerd before %s serves only the removed v1alpha2: a %s kubelet "+
				"on these nodes exits at start ('unknown service runtime.v1.RuntimeService') and the node goes NotReady.",
				r.kubeletFrom.MinorString(), r.below, t.MinorString()),
			"Move these nodes to a node image or package with containerd 1.7 or 2.x before their kubelet is upgraded; upgrade the "+
				"runtime first. On managed node pools, make sure the pool upgrade replaces the node image rather than only the kubelet.",
			r.Sources, caseCRIv1)
		out = append(out, fd)
	}
	ds := rt.DockershimRemovedIn.Sources
	for _, g := range grouped(dockershim) {
		out = append(out, nodeGroupFinding(g, finding.High,
			fmt.Sprintf("%s on %s runs through dockershim, which kubelet %s no longer has", g.what, poolWhere(g.pool), t.MinorString()),
			fmt.Sprintf("Their kubelet uses the built-in dockershim, removed in %s, and no cri-dockerd is in use: a %s kubelet cannot "+
				"reach a runtime on these nodes, and workloads that mount the Docker socket break when the runtime changes.",
				rt.dockershimRemoved.MinorString(), t.MinorString()),
			"Move these nodes to containerd or CRI-O (or install cri-dockerd) before upgrading their kubelet; inventory Docker socket mounts first (check docker-socket-coupling).",
			ds, caseDockershimSock, caseCRIv1))
	}
	for _, g := range grouped(criDockerd) {
		out = append(out, nodeGroupFinding(g, finding.Medium,
			fmt.Sprintf("%s on %s depends on cri-dockerd serving CRI v1 for kubelet %s", g.what, poolWhere(g.pool), t.MinorString()),
			"These nodes run Docker through cri-dockerd (their kubelet is past dockershim's removal). From 1.26 the kubelet needs CRI v1, "+
				"which cri-dockerd releases of the 1.26 launch did not serve. The API does not show cri-dockerd's version: check it on the nodes.",
			"Upgrade cri-dockerd to a release that serves CRI v1 before the kubelet reaches 1.26, or move the nodes to containerd or CRI-O.",
			ds, caseCRIv1))
	}
	return out
}

// nodeOSAtTarget finds nodes on an OS release their provider does not
// offer at the target, from the sourced nodeOSAtTarget rows only.
func nodeOSAtTarget(ctx *check.Context, f *facts, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	providers := map[string]bool{}
	for _, r := range f.NodeOSAtTarget {
		providers[r.Provider] = true
	}
	groups := map[string]*poolGroup{}
	rows := map[string]nodeOSRow{}
	var unknown int
	var osl check.OSLookup // a pool's nodes share one table lookup
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !belowTarget(n, t) {
			continue // its kubelet already runs the target
		}
		p := string(nodeos.ProviderOf(n.Spec.ProviderID, n.Labels))
		if !providers[p] {
			continue
		}
		info := osl.Identify(n)
		if !info.Known {
			unknown++
			continue
		}
		for _, r := range f.NodeOSAtTarget {
			if r.Provider == p && r.Distro == info.Distro && r.Version == info.Version && !t.Less(r.from) {
				what := fmt.Sprintf("%s %s", r.Distro, r.Version)
				add(groups, check.NodePool(n), what, n)
				rows[what] = r
				break
			}
		}
	}
	if unknown > 0 {
		ctx.Unknowable(ruleNodeOSAtTarget, "the OS of %s on a tabled provider is not one kubegap identifies", check.Plural(unknown, "node", "nodes"))
	}
	var out []finding.Finding
	for _, g := range grouped(groups) {
		r := rows[g.what]
		out = append(out, nodeGroupFinding(g, finding.High,
			fmt.Sprintf("%s on %s: %s does not offer it at %s", g.what, poolWhere(g.pool), strings.ToUpper(r.Provider), t.MinorString()),
			fmt.Sprintf("%s (from %s). This pool cannot be upgraded to %s on its current OS.", r.Note, r.from.MinorString(), t.MinorString()),
			"Move this pool to an OS the provider offers at the target (a new node pool on the current OS SKU or AMI type, then "+
				"drain the old one) before upgrading it.",
			r.Sources, r.Case))
	}
	return out
}

// nodeGroupFinding is a "fix before upgrading" finding naming one pool's
// nodes that share a runtime or OS.
func nodeGroupFinding(g *poolGroup, sev finding.Severity, title, why, fix string, sources []string, cases ...string) finding.Finding {
	refs, more := check.NodeRefs(g.nodes)
	f := finding.Finding{
		Check: "upgrade-preflight", Severity: sev, Preflight: finding.PreflightBefore,
		Title:       fmt.Sprintf("%s (%s)", title, check.Plural(len(g.nodes), "node", "nodes")),
		Message:     why + check.MoreText(more),
		Objects:     refs,
		Remediation: fix,
		Cases:       cases,
	}
	// Each node's own values, grouped by value: the nodes share a pool
	// and the rule, not necessarily their versions.
	f.AddEvidence(check.NodeValues(g.nodes, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.containerRuntimeVersion", n.Status.NodeInfo.ContainerRuntimeVersion),
			finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion),
			finding.Value("status.nodeInfo.osImage", n.Status.NodeInfo.OSImage)}
	})...)
	f.Evidence = append(f.Evidence, "sources: "+strings.Join(sources, ", "))
	return f
}

// daemonSetOnlyNodes counts, per pool, the nodes that run nothing but
// DaemonSet and mirror pods: they drain at once and can go first.
func daemonSetOnlyNodes(ctx *check.Context, t check.KubeVersion) []finding.Finding {
	s := ctx.Snapshot
	ix := s.Index()
	pools := map[string]int{}
	var nodes []*corev1.Node
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !belowTarget(n, t) {
			continue // its kubelet already runs the target
		}
		only := true
		for _, p := range ix.PodsOnNode(n.Name) {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Annotations["kubernetes.io/config.mirror"] != "" {
				continue
			}
			if len(p.OwnerReferences) == 0 || p.OwnerReferences[0].Kind != "DaemonSet" {
				only = false
				break
			}
		}
		if only {
			pools[check.NodePool(n)]++
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	var per []string
	for _, p := range slices.Sorted(maps.Keys(pools)) {
		per = append(per, fmt.Sprintf("%s: %s", poolWhere(p), check.Plural(pools[p], "node", "nodes")))
	}
	refs, more := check.NodeRefs(nodes)
	f := finding.Finding{
		Check: "upgrade-preflight", Severity: finding.Info, Preflight: finding.PreflightDuring,
		Title: fmt.Sprintf("%s only DaemonSet and mirror pods: they drain at once", nodesRun(len(nodes))),
		Message: fmt.Sprintf("kubectl drain skips DaemonSet pods (with --ignore-daemonsets) and cannot evict mirror pods, so these nodes "+
			"have nothing to evict and no budget to wait for. Per pool: %s.%s", strings.Join(per, "; "), check.MoreText(more)),
		Objects:     refs,
		Evidence:    []string{"per pool: " + strings.Join(per, ", ")},
		Remediation: "Upgrade or replace these nodes first where you control the order: they free capacity without moving workloads.",
		Cases:       []string{casePDBUpgrade},
	}
	// The nodes' pool label and kubelet (below the target), grouped, and
	// the pods they run, by node and first owner's kind, which is what
	// makes them DaemonSet pods.
	f.AddEvidence(check.NodeValues(nodes, func(n *corev1.Node) []finding.Field {
		var fs []finding.Field
		if key, value, ok := strings.Cut(check.NodePool(n), "="); ok {
			fs = append(fs, finding.Value("metadata.labels["+key+"]", value))
		}
		return append(fs, finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion))
	})...)
	var daemons finding.Grouper
	for _, n := range nodes {
		for _, p := range ix.PodsOnNode(n.Name) {
			if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.Annotations["kubernetes.io/config.mirror"] != "" {
				continue
			}
			daemons.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				finding.Value("spec.nodeName", p.Spec.NodeName), finding.Value("metadata.ownerReferences[0].kind", p.OwnerReferences[0].Kind))
		}
	}
	items := daemons.Items()
	if len(items) > check.MaxEvidence {
		f.Evidence = append(f.Evidence, fmt.Sprintf("the DaemonSet pods of the first %d nodes:", check.MaxEvidence))
		items = items[:check.MaxEvidence]
	}
	f.AddEvidence(items...)
	f.Evidence = append(f.Evidence, "kubectl drain reference: "+kubectlDrainDocURL)
	return []finding.Finding{f}
}
