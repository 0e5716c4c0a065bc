package runtime

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	ruleOOMGroup = "oom-group-single-process-kills"
	caseOOMGroup = "k8s-1-28-cgroupv2-oom-group-kills-whole-container-2024"
	// oomKillingReason is the reason of the Warning events the node's
	// kernel monitor (node-problem-detector) posts on the Node for each
	// process the kernel OOM-kills: "Memory cgroup out of memory: Killed
	// process …" (Azure/AKS issue 4154, on AKS 1.27.9).
	oomKillingReason = "OOMKilling"
)

// oomNode is a node still on the old default that reports single-process
// OOM kills, with the events that show them.
type oomNode struct {
	node   *corev1.Node
	why    string
	events []*corev1.Event
}

// oomGroupFinding reports the nodes whose kubelet is older than the
// change's first minor, whose OS boots cgroup v2 by default, and whose
// kernel monitor reports OOMKilling events: there the kernel kills one
// process of a container and leaves the rest running. Once the kubelet
// reaches kubeletFrom it sets memory.oom.group, and each such kill ends
// the whole container. Which pod a kill hit is not in the event; nor is
// the singleProcessOOMKill setting of a 1.32 kubelet, which is why only
// nodes before the change are judged.
func oomGroupFinding(ctx *check.Context, c *defaultChange) (finding.Finding, bool, error) {
	s := ctx.Snapshot
	if !ctx.Present(snapshot.Events) {
		ctx.Skip(ruleOOMGroup, "no Events in the input, so single-process OOM kills cannot be seen")
		return finding.Finding{}, false, nil
	}
	if !ctx.Complete(snapshot.Events) {
		ctx.Incomplete(ruleOOMGroup, "not every Warning event of the cluster is in the input")
	}
	kills := map[string][]*corev1.Event{}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Reason == oomKillingReason && e.InvolvedObject.Kind == "Node" {
			kills[e.InvolvedObject.Name] = append(kills[e.InvolvedObject.Name], e)
		}
	}
	if len(kills) == 0 {
		return finding.Finding{}, false, nil
	}
	jf, err := loadJVMFacts()
	if err != nil {
		return finding.Finding{}, false, err
	}
	var flagged []oomNode
	unknown := 0
	for i := range s.Nodes {
		n := &s.Nodes[i]
		evs := kills[n.Name]
		if len(evs) == 0 {
			continue
		}
		kv, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok {
			unknown++
			continue
		}
		if !kv.Less(c.kubeletFrom) {
			continue // already on the new default
		}
		jn := judgeJVMNode(n, jf)
		switch {
		case !jn.v2Known:
			unknown++
		case jn.cgroupV2:
			flagged = append(flagged, oomNode{node: n, why: jn.why, events: evs})
		}
	}
	if unknown > 0 {
		ctx.Incomplete(ruleOOMGroup, "%s with OOMKilling events report no kubelet version or run an OS whose default "+
			"cgroup version kubegap's table does not know", check.Plural(unknown, "node", "nodes"))
	}
	if len(flagged) == 0 {
		return finding.Finding{}, false, nil
	}
	f := finding.Finding{Check: defaultChangeID, Rule: ruleOOMGroup, Severity: finding.Medium, Cases: []string{c.Case}}
	var nodeG finding.Grouper
	var items []finding.EvidenceItem
	count := 0
	for _, on := range flagged {
		if len(f.Objects) < check.MaxListedObjects {
			f.Objects = append(f.Objects, check.NodeRef(on.node.Name))
		}
		info := on.node.Status.NodeInfo
		nodeG.Add(check.NodeRef(on.node.Name), finding.Value("status.nodeInfo.kubeletVersion", info.KubeletVersion),
			finding.Value("status.nodeInfo.osImage", info.OSImage))
		for _, e := range on.events {
			count++
			if len(items) < check.MaxEvidence {
				items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Event", Namespace: e.Namespace, Name: e.Name},
					finding.Value("reason", e.Reason), finding.Value("involvedObject.kind", e.InvolvedObject.Kind),
					finding.Value("involvedObject.name", e.InvolvedObject.Name), finding.Value("message", e.Message)))
			}
		}
	}
	f.AddEvidence(nodeG.Items()...)
	f.AddEvidence(items...)
	f.Title = fmt.Sprintf("%s on cgroup v2 before kubelet %d.%d %s single-process OOM kills, which end whole containers from %d.%d",
		check.Plural(len(flagged), "node", "nodes"), c.kubeletFrom.Major, c.kubeletFrom.Minor,
		check.Plural(count, "event reports", "events report"), c.kubeletFrom.Major, c.kubeletFrom.Minor)
	f.Message = strings.TrimSpace(c.Note) + " On these nodes the kernel is killing single processes inside containers " +
		"that keep running; after the kubelet upgrade each such kill restarts the container and every process in it. " +
		"For " + flagged[0].node.Name + ": " + flagged[0].why + ". The events do not say which pod was hit; the node's " +
		"cgroup version is inferred from its OS image, and a node may have been switched by hand."
	f.Evidence = append(f.Evidence, "change "+c.ID+"; sources: "+strings.Join(c.Sources, ", "))
	f.Remediation = "Before moving these nodes to kubelet 1.28 or later, find the pods the kills hit (the node's kernel " +
		"log names the process and cgroup) and test them on the target version: raise their memory limits to cover " +
		"every worker, or, from kubelet 1.32, set singleProcessOOMKill: true in the kubelet configuration of the pools " +
		"that run them."
	return f, true, nil
}
