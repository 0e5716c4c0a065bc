package availability

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	replicaSpreadID  = "replica-spread"
	ruleSpreadNode   = "one-node"
	ruleSpreadZone   = "one-zone"
	caseMoonlight    = "moonlight-cpu-colocation-kernel-panic-2019"
	spreadListedPods = 10
)

var spreadNeeds = []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets, snapshot.ReplicaSets}

// replicaSpreadCheck is critical-addon-colocation's placement test applied
// to every other Deployment and StatefulSet: replicas that share one node
// (or one zone) fall together.
func replicaSpreadCheck() check.Check {
	return check.Check{
		ID:       replicaSpreadID,
		Title:    "Workloads whose replicas all run on one node or in one zone",
		Severity: finding.Medium,
		Description: "A Deployment or StatefulSet with 2 or more replicas is meant to survive the loss of a node, but " +
			"the scheduler only spreads replicas when the template asks it to (pod anti-affinity, topology spread) " +
			"and never moves running pods apart afterwards. When every ready pod of such a workload sits on one " +
			"node, one reboot, drain or crash stops it; when CPU-heavy replicas without CPU requests share a node " +
			"they can saturate it, and rescheduled together they take the next node down the same way. Medium when " +
			"every ready pod shares one node while the cluster has other schedulable nodes (evidence gives the " +
			"template's spreading rules and containers without CPU requests); low when they share one zone while " +
			"schedulable nodes span several. Cluster add-ons are left to critical-addon-colocation. Pods are tied " +
			"to their workload by owner references (Pod to ReplicaSet to Deployment, Pod to StatefulSet), or, when the " +
			"ReplicaSet is not in the input, by the ReplicaSet's name (<deployment>-<pod-template-hash>) and the pod's " +
			"pod-template-hash label, as the Deployment controller writes them; from " +
			"partial input only workloads whose ready pods present reach spec.replicas, or the status.readyReplicas their " +
			"controller counted, are judged.",
		Reads: append(check.Needs(snapshot.Nodes, snapshot.Pods), check.Optional(snapshot.Deployments),
			check.Optional(snapshot.StatefulSets), check.Optional(snapshot.ReplicaSets),
			check.Optional(snapshot.Services), check.Optional(snapshot.ValidatingWebhookConfigurations),
			check.Optional(snapshot.MutatingWebhookConfigurations)),
		Rules: []check.Rule{
			{ID: ruleSpreadNode, Summary: "Deployments and StatefulSets with 2+ replicas whose ready pods all share one node", Needs: spreadNeeds},
			{ID: ruleSpreadZone, Summary: "Deployments and StatefulSets with 2+ replicas whose ready pods all share one zone while nodes span several", Needs: spreadNeeds},
		},
		Cases: check.Prevents(caseMoonlight),
		Run:   runReplicaSpread,
	}
}

// readyPodsByWorkload groups ready pods under the Deployment or
// StatefulSet that controls them, in one pass over the pods: matching
// every workload's selector against its namespace would cost workloads
// times pods. A pod reaches its Deployment through its ReplicaSet, or,
// when the ReplicaSet is not in the input, through the Deployment
// controller's naming (snapshot.Index.WorkloadVia, read from the shared
// check.PodWorkloadsOf); the lists are by the table's group number (see
// readyOf), and inferred says which groups were reached that way, with
// how, for evidence.
func readyPodsByWorkload(s *snapshot.Snapshot) (pw *check.PodWorkloads, byGroup [][]*snapshot.Pod, inferred map[int32]string) {
	pw = check.PodWorkloadsOf(s)
	byGroup, inferred = make([][]*snapshot.Pod, pw.Groups), map[int32]string{}
	for i, e := range pw.Of {
		if e < 0 {
			continue
		}
		w := &pw.Workloads[e]
		if w.Ref.Kind != "Deployment" && w.Ref.Kind != "StatefulSet" {
			continue
		}
		p := &s.Pods[i]
		if !podReady(p) {
			continue
		}
		byGroup[w.Group] = append(byGroup[w.Group], p)
		if via := pw.Via(i); via != "" && inferred[w.Group] == "" {
			inferred[w.Group] = via
		}
	}
	return pw, byGroup, inferred
}

func runReplicaSpread(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	sh := shapeOf(s)
	if ctx.Complete(snapshot.Nodes) && sh.schedulable < 2 {
		return nil, nil // a single-node cluster: nothing to spread over, by design
	}
	servicesByNS := webhookServicesByNS(s, failClosedBackends(s))
	pw, byGroup, inferred := readyPodsByWorkload(s)
	var out []finding.Finding
	var unknown []string
	for _, w := range replicatedWorkloads(s) {
		if w.replicas < minSpreadable || addonRole(w, servicesByNS) != "" {
			continue // add-ons: critical-addon-colocation reports them, at higher severity
		}
		g := pw.Group(snapshot.IDOf(w.kind, w.meta))
		var ready []*snapshot.Pod
		if g >= 0 {
			ready = byGroup[g]
		}
		if int32(len(ready)) < w.replicas && !spreadInputComplete(ctx, w) && !w.allReadySeen(len(ready)) {
			// Pods (or the ReplicaSets that tie them to w) missing from the
			// input may run elsewhere.
			unknown = append(unknown, w.String())
			continue
		}
		if len(ready) < minSpreadable {
			continue // fewer than two serve: an availability problem, not a placement one
		}
		if f, ok := spreadFinding(ctx, w, ready, sh); ok {
			if via := inferred[g]; via != "" {
				f.Evidence = append(f.Evidence, "pods tied to "+w.String()+" without their ReplicaSet: "+via)
			}
			out = append(out, f)
		}
	}
	if len(unknown) > 0 {
		for _, r := range []string{ruleSpreadNode, ruleSpreadZone} {
			ctx.Incomplete(r, "the pods of %s are not all in the input, so their placement is unknown", check.ListText(unknown, 5))
		}
	}
	return out, nil
}

func spreadInputComplete(ctx *check.Context, w replicated) bool {
	if !ctx.CompleteIn(snapshot.Pods, w.meta.Namespace) {
		return false
	}
	return w.kind != "Deployment" || ctx.CompleteIn(snapshot.ReplicaSets, w.meta.Namespace)
}

func spreadFinding(ctx *check.Context, w replicated, ready []*snapshot.Pod, sh clusterShape) (finding.Finding, bool) {
	pl := placementOf(sh, ready)
	zone, oneZone := pl.oneZone(sh)
	if !pl.oneNode(sh) && !oneZone {
		// Most workloads spread: decided before any text is built.
		return finding.Finding{}, false
	}
	hints, hard := spreadHints(w.spec)
	f := finding.Finding{Check: replicaSpreadID, Objects: []finding.ObjectRef{w.ref()}, Cases: []string{caseMoonlight}}
	ev := []string{
		fmt.Sprintf("%d replicas (spec.replicas; 1 when unset), %d ready pods", w.replicas, len(ready)),
		"template: " + hints,
	}
	if e := w.readyCountEvidence(len(ready)); e != "" {
		ev = append(ev, e)
	}
	if c := noCPURequest(w.spec); len(c) > 0 {
		ev = append(ev, "containers without a CPU request (the scheduler counts them as using none): "+check.ListText(c, 5))
	}
	switch {
	case pl.oneNode(sh):
		node := ready[0].Spec.NodeName
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("Every ready replica of %s runs on node %s", w, node)
		f.Message = fmt.Sprintf("All %d ready pods of %s run on node %s although %d schedulable nodes exist: "+
			"rebooting, draining or losing that node stops the workload, and replicas that compete for its CPU "+
			"can overload it together.", len(ready), w, node, sh.schedulable)
		f.Objects = append(f.Objects, check.NodeRef(node))
		ev = append(ev, fmt.Sprintf("ready pods on node %s: %s", node, podNamesMax(ready, spreadListedPods)))
	case oneZone:
		f.Severity = finding.Low
		f.Title = fmt.Sprintf("Every ready replica of %s runs in zone %s", w, zone)
		f.Message = fmt.Sprintf("The %d ready pods of %s run on %d nodes, all in zone %s, while schedulable nodes span %d zones: "+
			"a zone outage stops the workload.", len(ready), w, len(pl.nodes), zone, len(sh.zones))
		ev = append(ev, fmt.Sprintf("nodes: %s; cluster zones: %s", check.ListText(slices.Sorted(maps.Keys(pl.nodes)), 10), strings.Join(slices.Sorted(maps.Keys(sh.zones)), ", ")))
	default:
		return finding.Finding{}, false
	}
	if hard {
		ev = append(ev, "the template has a hard spreading rule, yet the pods share a failure domain: check its topology key")
	}
	f.Evidence = ev
	f.AddEvidence(podNodes(ready)...)
	f.Remediation = fmt.Sprintf("Add a topologySpreadConstraint on kubernetes.io/hostname (and topology.kubernetes.io/zone) or pod "+
		"anti-affinity to %s, give its containers CPU requests that match their use, then restart it "+
		"(kubectl -n %s rollout restart %s/%s) so the scheduler places the pods again.",
		w, w.meta.Namespace, strings.ToLower(w.kind), w.meta.Name)
	return f, true
}

// noCPURequest names the containers of spec without a CPU request.
func noCPURequest(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.Containers {
		if _, ok := c.Resources.Requests[corev1.ResourceCPU]; !ok {
			out = append(out, c.Name)
		}
	}
	return out
}

func podNamesMax(ps []*snapshot.Pod, max int) string {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return check.ListText(check.SortedUnique(names), max)
}

// podNodes quotes where each pod runs, pods on the same node in one item.
func podNodes(pods []*snapshot.Pod) []finding.EvidenceItem {
	var g finding.Grouper
	for _, p := range pods {
		g.Add(podRef(p), finding.Value("spec.nodeName", p.Spec.NodeName))
	}
	return g.Items()
}
