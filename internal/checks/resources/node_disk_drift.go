package resources

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/node-disk-drift.yaml
var diskDriftYAML []byte

var loadDiskDrift = check.Facts[check.Statements]("node disk facts", diskDriftYAML)

// Rules of node-disk-drift.
const (
	ruleDiskDrift    = "disk-drift"
	ruleDiskPressure = "disk-pressure"
	ruleNoSpace      = "no-space-events"

	diskDriftID = "node-disk-drift"
	mojDiskCase = "moj-cloud-platform-eks-module-upgrade-shrinks-node-disk-2023"
	// openebsHostpathCase is the case of data/node-local-volumes.yaml's
	// OpenEBS row.
	openebsHostpathCase = "openebs-hostpath-volume-fills-root-disk-evictions-2026"
	// controlPlaneDiskCase: a full root disk on one of three control-plane
	// VMs took etcd down there, seen here once the node reports
	// DiskPressure (detected: the API shows no usage before it).
	controlPlaneDiskCase = "indiehosters-control-plane-disk-full-etcd-2025"
	driftFraction        = 2 // policy: flagged under 1/driftFraction of the largest disk
)

// instanceTypeLabels name a node's machine type; the beta label is what
// older kubelets set.
var instanceTypeLabels = [...]string{"node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type"}

func nodeDiskDriftCheck() check.Check {
	return check.Check{
		ID:       diskDriftID,
		Title:    "Nodes of one machine type with far less disk than their peers, node-local volumes with no size limit on the root disk, and nodes under disk pressure",
		Severity: finding.High,
		Description: "Groups nodes by instance type (by pool when no instance-type label is set) and compares their " +
			"ephemeral-storage capacity. Medium: a node with under half the disk of the largest node of its type, " +
			"since the same machine type with a smaller disk points at a changed launch template, disk size default " +
			"or node image rather than at hardware, and the workloads drained onto it may no longer fit their " +
			"images and logs (a heuristic line). High: nodes reporting the DiskPressure condition, on which the " +
			"kubelet is evicting pods regardless of PodDisruptionBudgets; and Warning events saying \"no space left on " +
			"device\" (failed image pulls, container starts); a control-plane node under DiskPressure is named as such, since " +
			"etcd and the API server on it share that disk. Medium: PersistentVolumes of a node-local provisioner listed in " +
			"data/node-local-volumes.yaml (OpenEBS Local PV Hostpath, openebs.io/local) under its default base path " +
			"/var/openebs/local, which its installation guide gives as a directory on the root disk, whose StorageClass enables " +
			"neither XFSQuota " +
			"nor EXT4Quota: the claimed capacity is then no limit, and one growing volume can put the node under " +
			"DiskPressure. Volumes under another base path are not judged (a separate disk is the usual reason for one, " +
			"and the API does not show which disk a path is on). Nodes with neither an instance-type nor a " +
			"pool label have no known peers and are not compared. How much disk the images need is not judged: " +
			"kubegap drops the nodes' image lists to save memory.",
		Reads: append(check.Needs(snapshot.Nodes), check.Optional(snapshot.Events),
			check.Optional(snapshot.PersistentVolumes), check.Optional(snapshot.StorageClasses)),
		Rules: []check.Rule{
			{ID: ruleDiskDrift, Summary: "Nodes with under half the ephemeral storage of the largest node of their instance type",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleDiskPressure, Summary: "Nodes reporting DiskPressure",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleNoSpace, Summary: "Warning events saying a node's disk has no space left",
				Needs: []snapshot.Resource{snapshot.Events}},
			{ID: ruleUnboundedLocalVolumes, Summary: "Node-local volumes on the root disk whose StorageClass enforces no size limit",
				Needs: []snapshot.Resource{snapshot.PersistentVolumes, snapshot.StorageClasses}},
		},
		// The drift rule sees the smaller disks as soon as the new nodes join,
		// before any workload is drained onto them: that is the gap MoJ hit.
		Cases: check.Cite(check.Prevents(mojDiskCase, openebsHostpathCase), check.Detects(controlPlaneDiskCase)),
		Run:   runNodeDiskDrift,
	}
}

// diskGroup names the set of nodes whose disks should match: the instance
// type, or the pool when no label names the type.
func diskGroup(n *corev1.Node) string {
	for _, l := range instanceTypeLabels {
		if v := n.Labels[l]; v != "" {
			return "instance type " + v
		}
	}
	if p := check.NodePool(n); p != "" {
		return "pool " + p
	}
	return ""
}

type diskNode struct {
	node *corev1.Node
	disk int64
}

func gib(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func runNodeDiskDrift(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadDiskDrift()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input has no Nodes")
	}
	groups := map[string][]diskNode{}
	var pressure []*corev1.Node
	unknown := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if diskPressure(n) {
			pressure = append(pressure, n)
		}
		g := diskGroup(n)
		if g == "" {
			continue // no peers known: bare-metal nodes differ by design
		}
		q, ok := n.Status.Capacity[corev1.ResourceEphemeralStorage]
		if !ok || q.Value() <= 0 {
			unknown++
			continue
		}
		groups[g] = append(groups[g], diskNode{n, q.Value()})
	}
	if unknown > 0 {
		ctx.Incomplete(ruleDiskDrift, "%s report no ephemeral-storage capacity", check.Plural(unknown, "node", "nodes"))
	}
	if !ctx.Complete(snapshot.Nodes) {
		ctx.Incomplete(ruleDiskDrift, "only the nodes in the input were compared; a larger peer may be missing from it")
	}
	ev := facts.Evidence()
	var out []finding.Finding
	if f, ok := pressureFinding(pressure, ev); ok {
		out = append(out, f)
	}
	if f, ok := noSpaceFinding(s.Events, ev); ok {
		out = append(out, f)
	}
	out = append(out, driftFindings(groups, ev)...)
	local, err := unboundedLocalVolumeFindings(ctx)
	if err != nil {
		return nil, err
	}
	return append(out, local...), nil
}

func diskPressure(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeDiskPressure {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func pressureFinding(nodes []*corev1.Node, facts []string) (finding.Finding, bool) {
	if len(nodes) == 0 {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(nodes)
	var ev []string
	for i, n := range nodes {
		if i == check.MaxEvidence {
			break
		}
		ev = append(ev, fmt.Sprintf("Node %s (%s): condition DiskPressure=True", n.Name, orNone(check.NodePool(n))))
	}
	f := finding.Finding{
		Check: diskDriftID, Rule: ruleDiskPressure, Severity: finding.High,
		Title: fmt.Sprintf("%s report DiskPressure%s", check.Plural(len(nodes), "node", "nodes"), check.MoreText(more)),
		Message: "The kubelet on these nodes has found its root or image filesystem under the eviction threshold: it " +
			"removes unused images and evicts pods without regard to PodDisruptionBudgets, and image pulls can " +
			"fail with \"no space left on device\".",
		Objects: refs, Evidence: append(ev, facts...),
		Remediation: "Free or grow the nodes' disks (the launch template or node pool disk size); find what fills them " +
			"(images, container logs, emptyDir volumes) before more workloads land there.",
		Cases: []string{mojDiskCase},
	}
	var cp []string
	for _, n := range nodes {
		if controlPlaneNode(n) {
			cp = append(cp, n.Name)
		}
	}
	if len(cp) > 0 {
		which := strings.Join(cp, ", ") + " is a control-plane node"
		if len(cp) > 1 {
			which = strings.Join(cp, ", ") + " are control-plane nodes"
		}
		f.Message += " " + which + ": where etcd runs on it (stacked, as kubeadm sets it up), a full disk can stop that " +
			"member, and in a three-member cluster one more failure then loses quorum."
		f.Remediation += " On a control-plane node, free the space first (restarting the control plane does not), " +
			"and alert on its free disk, not only on the services' health."
		f.Cases = append(f.Cases, controlPlaneDiskCase)
		for _, name := range cp {
			f.Evidence = append(f.Evidence, fmt.Sprintf("Node %s: control-plane role label", name))
		}
	}
	f.AddEvidence(check.NodeValues(nodes, func(*corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.conditions[type=DiskPressure].status", "True")}
	})...)
	return f, true
}

// controlPlaneLabels mark a control-plane node (the second is the name
// kubeadm used before 1.20).
var controlPlaneLabels = [...]string{"node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master"}

func controlPlaneNode(n *corev1.Node) bool {
	for _, l := range controlPlaneLabels {
		if _, ok := n.Labels[l]; ok {
			return true
		}
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "no pool label"
	}
	return s
}

// driftFindings flags, per group, the nodes with under 1/driftFraction of
// the group's largest disk.
func driftFindings(groups map[string][]diskNode, facts []string) []finding.Finding {
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var out []finding.Finding
	for _, g := range names {
		if f, ok := driftFinding(g, groups[g], facts); ok {
			out = append(out, f)
		}
	}
	return out
}

func driftFinding(group string, nodes []diskNode, facts []string) (finding.Finding, bool) {
	largest := nodes[0]
	for _, d := range nodes {
		if d.disk > largest.disk {
			largest = d
		}
	}
	var small []*corev1.Node
	var ev []string
	for _, d := range nodes {
		if d.disk*driftFraction >= largest.disk {
			continue
		}
		small = append(small, d.node)
		if len(ev) < check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("Node %s (%s): ephemeral-storage %s", d.node.Name, orNone(check.NodePool(d.node)), gib(d.disk)))
		}
	}
	if len(small) == 0 {
		return finding.Finding{}, false
	}
	sort.Slice(small, func(i, j int) bool { return small[i].Name < small[j].Name })
	refs, more := check.NodeRefs(small)
	ev = append([]string{fmt.Sprintf("largest of %s: Node %s (%s) with %s", group, largest.node.Name,
		orNone(check.NodePool(largest.node)), gib(largest.disk))}, ev...)
	f := finding.Finding{
		Check: diskDriftID, Rule: ruleDiskDrift, Severity: finding.Medium,
		Title: fmt.Sprintf("%s of %s have under half the disk of their largest peer%s",
			check.Plural(len(small), "node", "nodes"), group, check.MoreText(more)),
		Message: "Nodes of the same machine type normally get the same root disk. A node with a fraction of its " +
			"peers' disk points at a changed launch template, node pool disk size or module default; the " +
			"workloads moved onto it pull the same images and write the same logs, and can fill it: failed image " +
			"pulls and DiskPressure evictions follow.",
		Objects: refs, Evidence: append(ev, facts...),
		Remediation: "Compare the launch template or node pool disk settings of the old and new nodes before draining " +
			"onto the smaller ones; keep the old pool until the new one has run the real workloads.",
		Cases: []string{mojDiskCase},
	}
	capacity := func(n *corev1.Node) []finding.Field {
		q := n.Status.Capacity[corev1.ResourceEphemeralStorage]
		return []finding.Field{finding.Value("status.capacity[ephemeral-storage]", q.String())}
	}
	f.AddEvidence(check.NodeValues([]*corev1.Node{largest.node}, capacity)...)
	f.AddEvidence(check.NodeValues(small, capacity)...)
	return f, true
}

// noSpaceMessage is the kernel's ENOSPC text, which image pulls and
// container starts report when the node's disk is full.
const noSpaceMessage = "no space left on device"

func noSpaceFinding(events []corev1.Event, facts []string) (finding.Finding, bool) {
	var objs []finding.ObjectRef
	var ev []string
	var items []finding.EvidenceItem
	n := 0
	for i := range events {
		e := &events[i]
		if e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, noSpaceMessage) {
			continue
		}
		n++
		o := e.InvolvedObject
		if len(objs) < check.MaxListedObjects {
			objs = append(objs, finding.ObjectRef{APIVersion: orV1(o.APIVersion), Kind: o.Kind, Namespace: o.Namespace, Name: o.Name})
		}
		if len(ev) < check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("%s %s/%s on %s: %s: %s", o.Kind, o.Namespace, o.Name, orNone(e.Source.Host), e.Reason, e.Message))
			items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Event", Namespace: e.Namespace, Name: e.Name},
				finding.Value("type", e.Type), finding.Value("reason", e.Reason), finding.Value("involvedObject.name", o.Name)))
		}
	}
	if n == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check: diskDriftID, Rule: ruleNoSpace, Severity: finding.High,
		Title: fmt.Sprintf("%s say a node's disk has no space left", check.Plural(n, "Warning event", "Warning events")),
		Message: "Image pulls or container starts failed because the node's disk is full: the pods cannot start " +
			"there, and the kubelet is likely evicting others to reclaim space.",
		Objects: objs, Evidence: append(ev, facts...),
		Remediation: "Grow the disks of the nodes named (the launch template or node pool disk size) or move the " +
			"workloads back to nodes with room; then find what fills them (images, logs, emptyDir).",
		Cases: []string{mojDiskCase},
	}
	f.AddEvidence(items...)
	return f, true
}

func orV1(apiVersion string) string {
	if apiVersion == "" {
		return "v1"
	}
	return apiVersion
}
