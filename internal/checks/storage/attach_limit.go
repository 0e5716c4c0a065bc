package storage

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/attach-limit.yaml
var attachLimitYAML []byte

var loadAttachLimit = check.Facts[check.Statements]("attach limit facts", attachLimitYAML)

// Rules of attach-limit.
const (
	attachLimitID   = "attach-limit"
	ruleNearLimit   = "near-attach-limit"
	ruleMaxVolCount = "max-volume-count-pending"
	berkeleyVolCase = "berkeley-datahub-max-volume-count-pending-2017"

	// nearLimitPercent is policy: a node using this share of a driver's
	// volume slots is reported, as the case's detection signal proposes.
	nearLimitPercent = 80
	csiVolumePrefix  = "kubernetes.io/csi/"
)

// maxVolumeMessages are what the scheduler's FailedScheduling events say
// when volume slots are the limit: the current plugin's text and the old
// predicate's name.
var maxVolumeMessages = []string{"exceed max volume count", "MaxVolumeCount"}

func attachLimitCheck() check.Check {
	return check.Check{
		ID:       attachLimitID,
		Title:    "Nodes at or near the number of volumes they can attach",
		Severity: finding.High,
		Description: "Per node and CSI driver, the volumes the node has attached or in use (status.volumesAttached " +
			"and volumesInUse, kubernetes.io/csi/DRIVER^HANDLE) against the driver's limit in the node's CSINode " +
			"(spec.drivers[].allocatable.count). Low from 80 percent of the limit (policy), medium at the limit: " +
			"no further pod with a volume of that driver fits there, however much CPU and memory is free, and " +
			"packing pods more densely reaches it first. High: Warning FailedScheduling events saying nodes exceed " +
			"the max volume count, so pods are Pending for it now. In-tree volumes not migrated to CSI, whose " +
			"limits come from the scheduler's defaults, are judged only through those events. On AWS Nitro instance types " +
			"whose EBS volumes share attachment slots with network interfaces and NVMe instance stores, an EBS CSI driver " +
			"before v1.6.0 (from its DaemonSet's image tag, without --volume-attach-limit) advertises a count from the " +
			"instance type alone: medium when the CSINode count exceeds the shared slots less one network interface and " +
			"the type's instance stores, low otherwise (every further interface the CNI attaches takes a slot it still offers).",
		Reads: append(check.Needs(snapshot.Nodes, snapshot.CSINodes), check.Optional(snapshot.Events), check.Optional(snapshot.DaemonSets)),
		Rules: []check.Rule{
			{ID: ruleNearLimit, Summary: "Nodes using 80 percent or more of a CSI driver's attach limit",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.CSINodes}},
			{ID: ruleMaxVolCount, Summary: "FailedScheduling events for exceeding the max volume count",
				Needs: []snapshot.Resource{snapshot.Events}},
			{ID: ruleEBSSharedSlots, Summary: "EBS CSI driver before v1.6.0 on Nitro nodes whose attachment slots ENIs and instance stores share",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Nodes, snapshot.CSINodes}},
		},
		Cases: check.Cite(check.Detects(berkeleyVolCase), check.Prevents(ebsNitroCase)),
		Run:   runAttachLimit,
	}
}

// volumesByDriver counts a node's unique CSI volumes, attached or in use,
// per driver.
func volumesByDriver(n *corev1.Node) map[string]int {
	seen := map[corev1.UniqueVolumeName]bool{}
	for _, v := range n.Status.VolumesAttached {
		seen[v.Name] = true
	}
	for _, v := range n.Status.VolumesInUse {
		seen[v] = true
	}
	out := map[string]int{}
	for name := range seen {
		rest, ok := strings.CutPrefix(string(name), csiVolumePrefix)
		if !ok {
			continue
		}
		if driver, _, ok := strings.Cut(rest, "^"); ok {
			out[driver]++
		}
	}
	return out
}

type fullNode struct {
	node        string
	driver      string
	used, limit int
}

func runAttachLimit(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadAttachLimit()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.Nodes) == 0 && len(s.Events) == 0 {
		return nil, check.NotEvaluated("the input has no Nodes or Events")
	}
	csiNodes := map[string]*storagev1.CSINode{}
	for i := range s.CSINodes {
		csiNodes[s.CSINodes[i].Name] = &s.CSINodes[i]
	}
	var full []fullNode
	missing := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		used := volumesByDriver(n)
		if len(used) == 0 {
			continue
		}
		cn := csiNodes[n.Name]
		if cn == nil {
			missing++
			continue
		}
		full = append(full, nodeAtLimit(n.Name, cn, used)...)
	}
	if missing > 0 {
		ctx.Incomplete(ruleNearLimit, "%s with CSI volumes have no CSINode in the input", check.Plural(missing, "node", "nodes"))
	}
	ev := facts.Evidence()
	out := nearLimitFindings(full, ev)
	if f, ok := maxVolumeEventFinding(s.Events, ev); ok {
		out = append(out, f)
	}
	out = append(out, ebsSharedSlotFindings(ctx)...)
	return out, nil
}

func nodeAtLimit(node string, cn *storagev1.CSINode, used map[string]int) []fullNode {
	var out []fullNode
	for _, d := range cn.Spec.Drivers {
		if d.Allocatable == nil || d.Allocatable.Count == nil || *d.Allocatable.Count <= 0 {
			continue // no limit reported: unbounded
		}
		limit := int(*d.Allocatable.Count)
		if u := used[d.Name]; u*100 >= limit*nearLimitPercent {
			out = append(out, fullNode{node, d.Name, u, limit})
		}
	}
	return out
}

func nearLimitFindings(full []fullNode, facts []string) []finding.Finding {
	sort.Slice(full, func(i, j int) bool {
		if full[i].used*full[j].limit != full[j].used*full[i].limit {
			return full[i].used*full[j].limit > full[j].used*full[i].limit
		}
		return full[i].node < full[j].node
	})
	var at, near []fullNode
	for _, f := range full {
		if f.used >= f.limit {
			at = append(at, f)
		} else {
			near = append(near, f)
		}
	}
	var out []finding.Finding
	for _, g := range []struct {
		nodes []fullNode
		sev   finding.Severity
		what  string
	}{{at, finding.Medium, "at"}, {near, finding.Low, fmt.Sprintf("at %d percent or more of", nearLimitPercent)}} {
		if len(g.nodes) == 0 {
			continue
		}
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		for _, f := range g.nodes {
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, check.NodeRef(f.node))
			}
			if len(ev) < check.MaxEvidence {
				ev = append(ev, fmt.Sprintf("Node %s: %d of %d %s volumes (CSINode allocatable.count)", f.node, f.used, f.limit, f.driver))
				items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "storage.k8s.io/v1", Kind: "CSINode", Name: f.node},
					finding.Value("spec.drivers[name="+f.driver+"].allocatable.count", f.limit)))
			}
		}
		fd := finding.Finding{
			Check: attachLimitID, Rule: ruleNearLimit, Severity: g.sev,
			Title: fmt.Sprintf("%s %s their CSI volume attach limit%s", check.Plural(len(g.nodes), "node is", "nodes are"), g.what,
				check.MoreText(len(g.nodes)-len(objs))),
			Message: "A node can attach only so many volumes of each CSI driver, and the scheduler will not place a pod " +
				"with such a volume on a node whose slots are used, whatever CPU and memory it has free. Packing more " +
				"pods with volumes per node (smaller requests, larger nodes) reaches this limit before any other.",
			Objects: objs, Evidence: append(ev, facts...),
			Remediation: "Add nodes or use smaller ones for pods with volumes, spread those pods (topology spread on " +
				"hostname), or share volumes; alert on Pending pods that name the volume count.",
			Cases: []string{berkeleyVolCase},
		}
		fd.AddEvidence(items...)
		out = append(out, fd)
	}
	return out
}

func maxVolumeEventFinding(events []corev1.Event, facts []string) (finding.Finding, bool) {
	var objs []finding.ObjectRef
	var ev []string
	var items []finding.EvidenceItem
	pods := 0
	for i := range events {
		e := &events[i]
		if e.Reason != "FailedScheduling" || e.InvolvedObject.Kind != "Pod" || !mentionsMaxVolume(e.Message) {
			continue
		}
		pods++
		if len(objs) < check.MaxListedObjects {
			objs = append(objs, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: e.InvolvedObject.Namespace, Name: e.InvolvedObject.Name})
		}
		if len(ev) < check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("Pod %s/%s: %s", e.InvolvedObject.Namespace, e.InvolvedObject.Name, e.Message))
			items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Event", Namespace: e.Namespace, Name: e.Name},
				finding.Value("reason", e.Reason), finding.Value("involvedObject.kind", e.InvolvedObject.Kind),
				finding.Value("involvedObject.name", e.InvolvedObject.Name)))
		}
	}
	if pods == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check: attachLimitID, Rule: ruleMaxVolCount, Severity: finding.High,
		Title: fmt.Sprintf("%s could not be scheduled because nodes exceed their max volume count", check.Plural(pods, "pod event says a pod", "pod events say pods")),
		Message: "The scheduler found no node with a free volume slot for these pods; they stay Pending until nodes " +
			"are added or volumes detached, even with CPU and memory to spare.",
		Objects: objs, Evidence: append(ev, facts...),
		Remediation: "Add nodes (smaller ones hold fewer pods per volume limit) and check the nodes' CSINode " +
			"allocatable counts against the volumes per node the workload needs.",
		Cases: []string{berkeleyVolCase},
	}
	f.AddEvidence(items...)
	return f, true
}

func mentionsMaxVolume(msg string) bool {
	for _, m := range maxVolumeMessages {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}
