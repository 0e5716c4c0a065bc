package availability

import (
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/critical-addon-colocation.yaml
var colocationYAML []byte

type colocationFacts struct {
	Limits []struct {
		ID               string   `json:"id"`
		Provider         string   `json:"provider"`
		PacketsPerSecond int      `json:"packetsPerSecond"`
		Per              string   `json:"per"`
		Note             string   `json:"note"`
		Sources          []string `json:"sources"`
	} `json:"limits"`
}

var loadColocationFacts = check.Facts("co-location facts", colocationYAML, func(f *colocationFacts) error {
	if len(f.Limits) == 0 || f.Limits[0].PacketsPerSecond <= 0 || len(f.Limits[0].Sources) == 0 {
		return errors.New("co-location facts: the AWS resolver limit needs packetsPerSecond and sources")
	}
	return nil
})

const (
	ruleOneNode   = "one-node"
	ruleOneZone   = "one-zone"
	caseOrbos     = "orbos-coredns-replicas-same-node-reboot-2020"
	caseEKSDNS    = "eks-vpc-resolver-throttling-coredns-colocated-2024"
	colocationID  = "critical-addon-colocation"
	minSpreadable = 2 // replicas: fewer cannot be spread at all
)

var colocationNeeds = []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets,
	snapshot.Services, snapshot.ValidatingWebhookConfigurations, snapshot.MutatingWebhookConfigurations}

// criticalAddonColocationCheck finds cluster add-ons that run several
// replicas, all of them on one node or in one zone.
func criticalAddonColocationCheck() check.Check {
	return check.Check{
		ID:       colocationID,
		Title:    "Critical add-ons whose replicas all run on one node or in one zone",
		Severity: finding.High,
		Description: "CoreDNS (k8s-app=kube-dns in kube-system), metrics-server, ingress controllers (by image) and the " +
			"backends of fail-closed admission webhooks run several replicas so that losing a node does not take " +
			"them down. Preferred (soft) anti-affinity does not guarantee that: a cluster that grows one node at a " +
			"time puts every replica on the first node and the scheduler never moves them, and one reboot then " +
			"stops cluster DNS. High when a Deployment or StatefulSet with 2 or more replicas has every ready pod " +
			"on one node while the cluster has other schedulable nodes the pods may run on; low, saying so, when taints " +
			"the template does not tolerate, its nodeSelector or its required node affinity keep the pods off every " +
			"other node (no spreading is possible then); medium when they share one zone while " +
			"schedulable nodes span several. Evidence says whether the template has required anti-affinity or " +
			"topology spread; on AWS, CoreDNS replicas on one node also share the VPC resolver's per-interface " +
			"packet limit. Single-node and single-zone clusters are not reported. A pod not in the input may run " +
			"elsewhere, so from partial input only workloads whose ready pods present reach spec.replicas, or the " +
			"status.readyReplicas their controller counted (the pods missing are then not ready), are judged.",
		Reads: append(check.Needs(snapshot.Nodes, snapshot.Pods), check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets),
			check.Optional(snapshot.Services), check.Optional(snapshot.ValidatingWebhookConfigurations),
			check.Optional(snapshot.MutatingWebhookConfigurations)),
		Rules: []check.Rule{
			{ID: ruleOneNode, Summary: "critical add-ons with 2+ replicas whose ready pods all share one node", Needs: colocationNeeds},
			{ID: ruleOneZone, Summary: "critical add-ons with 2+ replicas whose ready pods all share one zone while nodes span several", Needs: colocationNeeds},
		},
		Cases: check.Prevents(caseOrbos, caseEKSDNS),
		Run:   runCriticalAddonColocation,
	}
}

// clusterShape is what the schedulable nodes span.
type clusterShape struct {
	schedulable int
	zones       map[string]bool
	aws         bool
	// nodeZone is each node's zone by the node's position, "" for a node
	// without a zone label; podNodes is each pod's node position
	// (check.PodNodesOf): placementOf reads a ready pod's zone through
	// both, where a map by node name cost a hash per pod.
	nodeZone []string
	podNodes []int32
	s        *snapshot.Snapshot
}

// zoneOfPod is the zone of the node p is bound to; ok is false when that
// node is not in the input.
func (sh clusterShape) zoneOfPod(p *snapshot.Pod) (zone string, ok bool) {
	if i := check.PodPosition(sh.s, p); i >= 0 {
		if n := sh.podNodes[i]; n >= 0 {
			return sh.nodeZone[n], true
		}
		return "", false
	}
	// A pod outside the snapshot's list (none in kubegap): by name.
	if n := sh.s.Index().Node(p.Spec.NodeName); n != nil {
		return zoneOf(n), true
	}
	return "", false
}

func shapeOf(s *snapshot.Snapshot) clusterShape {
	sh := clusterShape{zones: map[string]bool{}, nodeZone: make([]string, len(s.Nodes)), podNodes: check.PodNodesOf(s), s: s}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		sh.nodeZone[i] = zoneOf(n)
		if !sh.aws && (strings.HasPrefix(n.Spec.ProviderID, "aws://") || n.Labels["eks.amazonaws.com/nodegroup"] != "") {
			sh.aws = true
		}
		if n.Spec.Unschedulable {
			continue
		}
		sh.schedulable++
		if z := sh.nodeZone[i]; z != "" {
			sh.zones[z] = true
		}
	}
	return sh
}

func runCriticalAddonColocation(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadColocationFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	ix := s.Index()
	sh := shapeOf(s)
	if ctx.Complete(snapshot.Nodes) && sh.schedulable < 2 {
		return nil, nil // a single-node cluster: nothing to spread over, by design
	}
	servicesByNS := webhookServicesByNS(s, failClosedBackends(s))
	var out []finding.Finding
	var unknown []string
	for _, w := range replicatedWorkloads(s) {
		if w.replicas < minSpreadable {
			continue
		}
		role := addonRole(w, servicesByNS)
		if role == "" {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		if err != nil {
			continue
		}
		var ready []*snapshot.Pod
		for _, p := range ix.PodsMatching(w.meta.Namespace, sel) {
			if podReady(p) {
				ready = append(ready, p)
			}
		}
		if len(ready) < minSpreadable {
			continue // fewer than two serve: an availability problem, not a placement one
		}
		if !ctx.CompleteIn(snapshot.Pods, w.meta.Namespace) && int32(len(ready)) < w.replicas && !w.allReadySeen(len(ready)) {
			// Pods missing from the input may run elsewhere.
			unknown = append(unknown, w.String())
			continue
		}
		if f, ok := colocationFinding(ctx, facts, w, role, ready, sh); ok {
			out = append(out, f)
		}
	}
	if len(unknown) > 0 {
		for _, r := range []string{ruleOneNode, ruleOneZone} {
			ctx.Incomplete(r, "the pods of %s are not all in the input, so their placement is unknown", check.ListText(unknown, 5))
		}
	}
	return out, nil
}

func colocationFinding(ctx *check.Context, facts *colocationFacts, w replicated, role string, ready []*snapshot.Pod, sh clusterShape) (finding.Finding, bool) {
	pl := placementOf(sh, ready)
	hints, hard := spreadHints(w.spec)
	f := finding.Finding{Check: colocationID, Objects: []finding.ObjectRef{w.ref()}}
	ev := []string{
		fmt.Sprintf("%s: %s", w, role),
		fmt.Sprintf("%d replicas (spec.replicas; 1 when unset), %d ready pods", w.replicas, len(ready)),
		"template: " + hints,
	}
	if e := w.readyCountEvidence(len(ready)); e != "" {
		ev = append(ev, e)
	}
	zone, oneZone := pl.oneZone(sh)
	// The eligible nodes (a walk of every node) matter only when every
	// pod is on one node of a completely read node list.
	var eligible []string
	pinned := false
	if pl.oneNode(sh) && ctx.Complete(snapshot.Nodes) {
		eligible = eligibleNodes(ctx.Snapshot, w.spec)
		pinned = len(eligible) < 2
	}
	switch {
	case pinned:
		// Other nodes exist, but taints the template does not tolerate,
		// its nodeSelector or its required node affinity keep the pods
		// off them: no spreading is possible until a second node admits
		// them, so this is a single point of failure to know about, not a
		// placement the user can fix by restarting the pods.
		node := ready[0].Spec.NodeName
		f.Severity = finding.Low
		f.Title = fmt.Sprintf("Every ready replica of %s (%s) runs on node %s, the only node its pods may run on", w, role, node)
		f.Message = fmt.Sprintf("All %d ready pods of %s run on node %s. Of the %d schedulable nodes, %s: "+
			"no spreading is possible until another node admits these pods, and losing node %s takes the %s down completely.",
			len(ready), w, node, sh.schedulable, eligibleText(eligible), node, role)
		f.Objects = append(f.Objects, check.NodeRef(node))
		f.Cases = []string{caseOrbos}
		ev = append(ev, fmt.Sprintf("ready pods on node %s: %s", node, podNames(ready)),
			"nodes the template's tolerations, nodeSelector and required node affinity admit: "+eligibleText(eligible))
		f.Evidence = ev
		f.Remediation = fmt.Sprintf("Let the pods of %s run on a second node: add a node they may run on, or tolerate the taints (and widen the "+
			"nodeSelector or node affinity) that keep them off the others; then spread them as below. "+
			"Until then a PodDisruptionBudget at least keeps a drain of node %s from evicting them all at once.", w, node)
		return f, true
	case pl.oneNode(sh):
		node := ready[0].Spec.NodeName
		f.Severity = finding.High
		f.Title = fmt.Sprintf("Every ready replica of %s (%s) runs on node %s", w, role, node)
		f.Message = fmt.Sprintf("All %d ready pods of %s run on node %s although %d schedulable nodes exist: "+
			"rebooting, draining or losing that one node takes the %s down completely, replicas notwithstanding.",
			len(ready), w, node, sh.schedulable, role)
		f.Objects = append(f.Objects, check.NodeRef(node))
		f.Cases = []string{caseOrbos}
		ev = append(ev, fmt.Sprintf("ready pods on node %s: %s", node, podNames(ready)))
		if role == "CoreDNS" {
			f.Cases = append(f.Cases, caseEKSDNS)
			if sh.aws {
				l := facts.Limits[0]
				f.Message += fmt.Sprintf(" On AWS they also share that node's network interface and its budget of %d packets per second to the VPC resolver.",
					l.PacketsPerSecond)
				ev = append(ev, fmt.Sprintf("AWS node (providerID aws:// or EKS labels): the VPC resolver accepts %d packets/s per %s", l.PacketsPerSecond, l.Per))
			}
		}
	case oneZone:
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("Every ready replica of %s (%s) runs in zone %s", w, role, zone)
		f.Message = fmt.Sprintf("The %d ready pods of %s run on %d nodes, all in zone %s, while schedulable nodes span %d zones: "+
			"a zone outage takes the %s down completely.", len(ready), w, len(pl.nodes), zone, len(sh.zones), role)
		f.Cases = []string{caseOrbos}
		if role == "CoreDNS" {
			f.Cases = append(f.Cases, caseEKSDNS)
		}
		for _, n := range slices.Sorted(maps.Keys(pl.nodes)) {
			f.Objects = append(f.Objects, check.NodeRef(n))
		}
		ev = append(ev, fmt.Sprintf("nodes: %s; cluster zones: %s", strings.Join(slices.Sorted(maps.Keys(pl.nodes)), ", "), strings.Join(slices.Sorted(maps.Keys(sh.zones)), ", ")))
	default:
		return finding.Finding{}, false
	}
	if hard {
		ev = append(ev, "the template has a hard spreading rule, yet the pods share a failure domain: check its topology key")
	}
	f.Evidence = ev
	f.AddEvidence(podNodes(ready)...)
	f.Remediation = fmt.Sprintf("Spread the replicas: add a topologySpreadConstraint on kubernetes.io/hostname (and on topology.kubernetes.io/zone) "+
		"or required pod anti-affinity to %s, then restart it (kubectl -n %s rollout restart %s/%s) so the scheduler places the pods again; "+
		"a PodDisruptionBudget keeps drains from evicting them all at once.",
		w, w.meta.Namespace, strings.ToLower(w.kind), w.meta.Name)
	return f, true
}

func podNames(ps []*snapshot.Pod) string {
	names := make([]string, 0, len(ps))
	for _, p := range ps {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return check.ListText(names, 10)
}
