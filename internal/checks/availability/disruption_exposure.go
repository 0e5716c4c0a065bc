package availability

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	disruptionID     = "disruption-exposure"
	ruleCordoned     = "endpoints-on-cordoned-nodes"
	ruleLocalTraffic = "local-traffic-one-node"
	ruleNoPDB        = "few-replicas-no-pdb"

	caseMybinder  = "mybinder-ingress-pods-on-cordoned-nodes-2019"
	caseDevopsHof = "devops-hof-drain-externaltrafficpolicy-local-ingress-outage-2019"
	caseLocal502  = "externaltrafficpolicy-local-rolling-update-502-2021"
	caseGKESurge  = "gke-surge-upgrade-two-replicas-no-pdb-2026"
	// DFDS's AMI rollover cordoned every node; single-replica services
	// without a budget went down while their one pod restarted.
	caseDFDSRollover = "dfds-ami-rollover-cordons-all-nodes-single-replica-2024"
	// The cluster autoscaler scaled down the core node under LEAP's one
	// JupyterHub hub pod, which had no budget (z2jh 3.2.0's default).
	caseLEAPHub = "2i2c-leap-autoscaler-drains-core-node-single-hub-pod-2023"

	// maxUnprotectedReplicas: Service backends with this many replicas or
	// fewer and no PDB are reported. Policy: with two replicas and no
	// budget, a surge upgrade can evict both before a replacement is ready
	// (the GKE case); with more, one eviction at a time leaves capacity.
	maxUnprotectedReplicas = 2
)

// disruptionExposureCheck finds Services and workloads that routine node
// maintenance (cordon, drain, surge upgrade) takes fully offline.
func disruptionExposureCheck() check.Check {
	return check.Check{
		ID:       disruptionID,
		Title:    "Services and workloads a node drain or upgrade takes offline",
		Severity: finding.High,
		Description: "Node upgrades cordon and drain nodes; whatever has all its serving pods there goes down. " +
			"Four rules. endpoints-on-cordoned-nodes (high): a Service whose every ready endpoint " +
			"(EndpointSlice nodeName) is on a cordoned node (spec.unschedulable), as when mybinder.org's ingress " +
			"pods all sat on the old pool being retired; the next drain empties it. endpoints-on-retiring-pool " +
			"(medium): a LoadBalancer or NodePort Service whose every ready endpoint is on schedulable nodes of one " +
			"pool (the AKS, EKS, GKE or Karpenter pool label) whose kubelets are all an older minor than another " +
			"pool's, the stage of a pool migration before that cordon. local-traffic-one-node " +
			"(medium): a LoadBalancer or NodePort Service with externalTrafficPolicy Local whose ready endpoints " +
			"are all on one node: the load balancer sends traffic only to nodes with a local endpoint, so draining " +
			"or rolling that node drops traffic until its health checks catch up. few-replicas-no-pdb: a Deployment " +
			"or StatefulSet backing a Service with 2 replicas (medium) or 1 (low) and no PodDisruptionBudget " +
			"selecting its pods: a surge upgrade may evict them faster than replacements become ready. The replica " +
			"threshold is our policy, from the GKE case. PDBs are judged per namespace and only where the input " +
			"holds them completely; endpoints on nodes missing from the input are not judged.",
		Reads: append(check.Needs(snapshot.Services), check.Optional(snapshot.EndpointSlices), check.Optional(snapshot.Nodes),
			check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets), check.Optional(snapshot.PodDisruptionBudgets)),
		Rules: []check.Rule{
			{ID: ruleCordoned, Summary: "Services whose every ready endpoint is on a cordoned node",
				Needs: []snapshot.Resource{snapshot.Services, snapshot.EndpointSlices, snapshot.Nodes}},
			{ID: ruleOldPool, Summary: "LoadBalancer and NodePort Services with every ready endpoint on a pool older than another",
				Needs: []snapshot.Resource{snapshot.Services, snapshot.EndpointSlices, snapshot.Nodes}},
			{ID: ruleLocalTraffic, Summary: "externalTrafficPolicy Local Services with all ready endpoints on one node",
				Needs: []snapshot.Resource{snapshot.Services, snapshot.EndpointSlices}},
			{ID: ruleNoPDB, Summary: "Service backends with 2 or fewer replicas and no PodDisruptionBudget",
				Needs: []snapshot.Resource{snapshot.Services, snapshot.Deployments, snapshot.StatefulSets, snapshot.PodDisruptionBudgets}},
		},
		Cases: check.Cite(check.Prevents(caseMybinder, caseDevopsHof, caseLocal502, caseGKESurge, caseDFDSRollover, caseLEAPHub)),
		Run:   runDisruptionExposure,
	}
}

// readyEndpointNodes maps "namespace/service" to the nodes of its ready
// endpoints; the second map counts endpoints whose node is not given. A
// dual-stack Service has a slice per address family listing the same pods,
// so when a Service has slices of several families its endpoints are told
// apart by their target; one family needs no such bookkeeping, which
// matters at 100,000 endpoints.
func readyEndpointNodes(s *snapshot.Snapshot) (map[string]map[string]int, map[string]int) {
	type svcSlices struct {
		slices   []*discoveryv1.EndpointSlice
		families map[discoveryv1.AddressType]bool
	}
	bySvc := map[string]*svcSlices{}
	for i := range s.EndpointSlices {
		sl := &s.EndpointSlices[i]
		svc := sl.Labels["kubernetes.io/service-name"]
		if svc == "" {
			continue
		}
		key := sl.Namespace + "/" + svc
		g := bySvc[key]
		if g == nil {
			g = &svcSlices{families: map[discoveryv1.AddressType]bool{}}
			bySvc[key] = g
		}
		g.slices = append(g.slices, sl)
		g.families[sl.AddressType] = true
	}
	nodes := make(map[string]map[string]int, len(bySvc))
	noNode := map[string]int{}
	for key, g := range bySvc {
		var seen map[string]bool
		if len(g.families) > 1 {
			seen = map[string]bool{}
		}
		for _, sl := range g.slices {
			for _, ep := range sl.Endpoints {
				// A nil ready condition means unknown, which consumers treat as ready.
				if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
					continue
				}
				if seen != nil && ep.TargetRef != nil {
					id := ep.TargetRef.Kind + "/" + ep.TargetRef.Name
					if seen[id] {
						continue
					}
					seen[id] = true
				}
				if ep.NodeName == nil || *ep.NodeName == "" {
					noNode[key]++
					continue
				}
				if nodes[key] == nil {
					nodes[key] = map[string]int{}
				}
				nodes[key][*ep.NodeName]++
			}
		}
	}
	return nodes, noNode
}

func runDisruptionExposure(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	ix := s.Index()
	epNodes, noNode := readyEndpointNodes(s)
	pools := nodePoolMinors(s)
	var out []finding.Finding
	var unknownNodes []string
	for i := range s.Services {
		svc := &s.Services[i]
		key := svc.Namespace + "/" + svc.Name
		nodes := epNodes[key]
		if len(nodes) == 0 {
			continue
		}
		if f, ok, unknown := cordonedFinding(ix, svc, nodes, noNode[key]); ok {
			out = append(out, f)
		} else if f, ok := retiringPoolFinding(ix, svc, nodes, noNode[key], pools); ok {
			out = append(out, f)
		} else if unknown {
			unknownNodes = append(unknownNodes, "Service "+key)
		}
		if f, ok := localTrafficFinding(svc, nodes, noNode[key]); ok {
			out = append(out, f)
		}
	}
	if len(unknownNodes) > 0 {
		ctx.Incomplete(ruleCordoned, "the nodes of some endpoints of %s are not in the input", check.ListText(unknownNodes, 5))
	}
	out = append(out, noPDBFindings(ctx)...)
	return out, nil
}

// cordonedFinding reports a Service whose every ready endpoint is on a
// cordoned node. unknown is true when some endpoint's node is missing
// from the input and the rest are cordoned.
func cordonedFinding(ix *snapshot.Index, svc *corev1.Service, nodes map[string]int, withoutNode int) (f finding.Finding, ok, unknown bool) {
	if withoutNode > 0 {
		return f, false, false
	}
	names := make([]string, 0, len(nodes))
	total := 0
	for n, c := range nodes {
		node := ix.Node(n)
		if node == nil {
			unknown = true
			continue
		}
		if !node.Spec.Unschedulable {
			return f, false, false
		}
		names = append(names, n)
		total += c
	}
	if unknown {
		return f, false, true
	}
	sort.Strings(names)
	f = finding.Finding{
		Check:    disruptionID,
		Severity: finding.High,
		Title:    fmt.Sprintf("Every ready endpoint of Service %s/%s is on a cordoned node", svc.Namespace, svc.Name),
		Message: fmt.Sprintf("All %d ready endpoints of Service %s/%s run on %s that are cordoned (spec.unschedulable), "+
			"normally because they are being drained or retired: when they are drained or removed the Service has no "+
			"backend until replacements start elsewhere, and nothing moves the pods before that.",
			total, svc.Namespace, svc.Name, check.Plural(len(names), "node", "nodes")),
		Objects:     []finding.ObjectRef{check.Ref("v1", "Service", &svc.ObjectMeta)},
		Remediation: "Move the backends off the cordoned nodes before draining them (kubectl rollout restart of the workload places the new pods on schedulable nodes), and keep a PodDisruptionBudget so drains wait for replacements.",
		Cases:       []string{caseMybinder},
	}
	for i, n := range names {
		if i == check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, check.NodeRef(n))
	}
	f.Evidence = []string{fmt.Sprintf("ready endpoints by node: %s", endpointText(nodes, names))}
	var cordoned finding.Grouper
	for _, n := range names {
		cordoned.Add(check.NodeRef(n), finding.Value("spec.unschedulable", true))
	}
	f.AddEvidence(cordoned.Items()...)
	if svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal {
		f.Cases = append(f.Cases, caseDevopsHof)
		f.Evidence = append(f.Evidence, "externalTrafficPolicy Local: the load balancer sends traffic only to these nodes")
		f.AddEvidence(finding.Quote(f.Objects[0], finding.Value("spec.externalTrafficPolicy", string(svc.Spec.ExternalTrafficPolicy))))
	}
	return f, true, false
}

func endpointText(nodes map[string]int, names []string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s (%d)", n, nodes[n]))
	}
	return check.ListText(parts, 10)
}

// localTrafficFinding reports an externalTrafficPolicy Local Service whose
// ready endpoints all sit on one node.
func localTrafficFinding(svc *corev1.Service, nodes map[string]int, withoutNode int) (finding.Finding, bool) {
	if svc.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal || withoutNode > 0 || len(nodes) != 1 {
		return finding.Finding{}, false
	}
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer && svc.Spec.Type != corev1.ServiceTypeNodePort {
		return finding.Finding{}, false
	}
	var node string
	var count int
	for n, c := range nodes {
		node, count = n, c
	}
	f := finding.Finding{
		Check:    disruptionID,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("Service %s/%s (externalTrafficPolicy Local) has ready endpoints on one node only", svc.Namespace, svc.Name),
		Message: fmt.Sprintf("Service %s/%s is a %s with externalTrafficPolicy Local, so outside traffic goes only to nodes "+
			"that run one of its ready endpoints, and all %d of them run on node %s. Draining, rebooting or rolling "+
			"that node drops incoming traffic until the load balancer's health checks notice and replacements start elsewhere.",
			svc.Namespace, svc.Name, svc.Spec.Type, count, node),
		Objects:  []finding.ObjectRef{check.Ref("v1", "Service", &svc.ObjectMeta), check.NodeRef(node)},
		Evidence: []string{fmt.Sprintf("ready endpoints: %d, all on node %s", count, node)},
		Remediation: "Run the backends on several nodes (more replicas with topology spread on kubernetes.io/hostname); " +
			"give them a preStop delay longer than the load balancer's health-check interval, or use externalTrafficPolicy Cluster if the client source IP is not needed.",
		Cases: []string{caseDevopsHof, caseLocal502},
	}
	f.AddEvidence(finding.Quote(f.Objects[0], finding.Value("spec.type", string(svc.Spec.Type)),
		finding.Value("spec.externalTrafficPolicy", string(svc.Spec.ExternalTrafficPolicy))))
	return f, true
}

// noPDBFindings reports Service backends with few replicas and no PDB.
func noPDBFindings(ctx *check.Context) []finding.Finding {
	s := ctx.Snapshot
	if ctx.Complete(snapshot.Nodes) && len(s.Nodes) == 1 {
		return nil // a single-node cluster: a drain takes everything down, budgets or not
	}
	type nsIndex struct {
		services []*corev1.Service
		pdbs     []labels.Selector
	}
	byNS := map[string]*nsIndex{}
	get := func(ns string) *nsIndex {
		if byNS[ns] == nil {
			byNS[ns] = &nsIndex{}
		}
		return byNS[ns]
	}
	for i := range s.Services {
		if len(s.Services[i].Spec.Selector) > 0 {
			get(s.Services[i].Namespace).services = append(get(s.Services[i].Namespace).services, &s.Services[i])
		}
	}
	for i := range s.PodDisruptionBudgets {
		p := &s.PodDisruptionBudgets[i]
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || p.Spec.Selector == nil {
			continue
		}
		get(p.Namespace).pdbs = append(get(p.Namespace).pdbs, sel)
	}
	var out []finding.Finding
	var unknown []string
	for _, w := range replicatedWorkloads(s) {
		if w.replicas < 1 || w.replicas > maxUnprotectedReplicas {
			continue
		}
		idx := byNS[w.meta.Namespace]
		if idx == nil || len(idx.services) == 0 {
			continue
		}
		var backs []string
		objs := []finding.ObjectRef{w.ref()}
		set := labels.Set(w.labels)
		for _, svc := range idx.services {
			if labels.SelectorFromSet(svc.Spec.Selector).Matches(set) {
				backs = append(backs, svc.Name)
				if len(objs) <= check.MaxListedObjects {
					objs = append(objs, check.Ref("v1", "Service", &svc.ObjectMeta))
				}
			}
		}
		if len(backs) == 0 {
			continue
		}
		covered := false
		for _, sel := range idx.pdbs {
			if !sel.Empty() && sel.Matches(set) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		if !ctx.CompleteIn(snapshot.PodDisruptionBudgets, w.meta.Namespace) {
			unknown = append(unknown, w.String())
			continue
		}
		sev, cases := finding.Low, []string{caseGKESurge, caseDFDSRollover, caseLEAPHub}
		why := "a single replica: any drain or node loss takes it offline, and a PodDisruptionBudget alone cannot help (add replicas first)"
		if w.replicas == 2 {
			sev, cases = finding.Medium, []string{caseGKESurge}
			why = "two replicas and no budget: a drain or surge upgrade may evict both before a replacement is ready"
		}
		f := finding.Finding{
			Check:    disruptionID,
			Severity: sev,
			Title:    fmt.Sprintf("%s serves Service %s with %s and no PodDisruptionBudget", w, check.ListText(backs, 3), check.Plural(int(w.replicas), "replica", "replicas")),
			Message: fmt.Sprintf("%s backs Service %s in namespace %s with spec.replicas %d and no PodDisruptionBudget selects its pods: %s.",
				w, strings.Join(backs, ", "), w.meta.Namespace, w.replicas, why),
			Objects: objs,
			Evidence: []string{
				fmt.Sprintf("%d replicas (spec.replicas; 1 when unset); template labels %s", w.replicas, labels.Set(w.labels).String()),
				fmt.Sprintf("no PodDisruptionBudget in namespace %s selects these labels", w.meta.Namespace),
			},
			Remediation: "Run at least 2 replicas (3 for anything user-facing) spread over nodes, and add a PodDisruptionBudget " +
				"(maxUnavailable: 1) so drains evict one pod at a time and wait for readiness; make the readiness probe reflect real readiness. " +
				"A pod that cannot run twice (a JupyterHub hub) can at least keep the cluster autoscaler from scaling its node down " +
				"with the pod annotation cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\".",
			Cases: cases,
		}
		var labelFields []finding.Field
		for _, k := range slices.Sorted(maps.Keys(w.labels)) {
			labelFields = append(labelFields, finding.Value("spec.template.metadata.labels["+k+"]", w.labels[k]))
		}
		if len(labelFields) > 0 {
			f.AddEvidence(finding.Quote(w.ref(), labelFields...))
		}
		out = append(out, f)
	}
	if len(unknown) > 0 {
		ctx.Incomplete(ruleNoPDB, "PodDisruptionBudgets are not complete for %s: a budget not in the input may cover them", check.ListText(unknown, 5))
	}
	return out
}
