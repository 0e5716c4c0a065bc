package availability

// pdb-blocks-drain's budget rules, no-eviction-allowed and exhausted: one
// budget judged on its own, from its status or, without one, from the
// pods and workloads it selects. The check itself, with the
// overlapping-budgets and selects-nothing rules, is in pdb_blocks_drain.go.

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// pdbBudgetFinding judges one budget on its own.
func pdbBudgetFinding(ctx *check.Context, v *pdbView, cn *drainNodes, marks *check.PodNodeMarks) (finding.Finding, bool) {
	p := v.pdb
	name := p.Namespace + "/" + p.Name
	expected, expectedFrom := v.expected()
	if v.none || (v.podsComplete && len(v.pods) == 0) {
		return pdbSelectsNothing(ctx, v)
	}
	if len(v.pods) > 0 && v.skipped == len(v.pods) {
		// Only DaemonSet and mirror pods, which kubectl drain never evicts.
		return finding.Finding{}, false
	}
	// Pods the input does not show: some of them may be healthy.
	unseen := expected - len(v.pods)

	// Pending pods count as unhealthy too: a replica whose sandbox cannot be
	// created uses up the budget of its healthy siblings. Only Running
	// not-Ready pods are themselves protected by the budget (the eviction
	// API lets Pending pods go).
	var healthy, runningNotReady int
	var notReady []*snapshot.Pod
	for _, pod := range v.pods {
		switch {
		case check.PodReady(pod):
			healthy++
		case pod.Status.Phase == corev1.PodRunning:
			runningNotReady++
			notReady = append(notReady, pod)
		default:
			notReady = append(notReady, pod)
		}
	}

	var (
		desired    int
		structural string
		ev         []string
		items      []finding.EvidenceItem // quoted fields, after ev
	)
	pdbRef := check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name)
	switch {
	case p.Spec.MaxUnavailable != nil:
		// The disruption controller rounds percentages up, so only 0 or 0%
		// scale to zero, whatever the number of pods.
		mu, err := intstr.GetScaledValueFromIntOrPercent(p.Spec.MaxUnavailable, expected, true)
		if err != nil {
			return finding.Finding{}, false
		}
		desired = max(expected-mu, 0)
		if intOrPercentZero(p.Spec.MaxUnavailable) {
			structural = fmt.Sprintf("maxUnavailable is %s, which allows no voluntary eviction at all", p.Spec.MaxUnavailable.String())
			items = append(items, finding.Quote(pdbRef, finding.Value("spec.maxUnavailable", p.Spec.MaxUnavailable.String())))
		}
	case p.Spec.MinAvailable != nil:
		ma, err := intstr.GetScaledValueFromIntOrPercent(p.Spec.MinAvailable, expected, true)
		if err != nil {
			return finding.Finding{}, false
		}
		desired = ma
		switch {
		case p.Spec.MinAvailable.Type == intstr.String && strings.TrimSpace(p.Spec.MinAvailable.StrVal) == "100%":
			structural = "minAvailable is 100%, so even with every pod healthy no eviction is allowed"
		case expected > 0 && ma >= expected:
			structural = fmt.Sprintf("minAvailable is %s and it selects %d pod%s, so even with every pod healthy no eviction is allowed",
				p.Spec.MinAvailable.String(), expected, check.PluralS(expected))
		}
		if structural != "" {
			items = append(items, finding.Quote(pdbRef, finding.Value("spec.minAvailable", p.Spec.MinAvailable.String())))
		}
	}

	// The controller's own verdict, when the input carries status.
	statusKnown := pdbStatusKnown(p)
	statusZero := statusKnown && p.Status.DisruptionsAllowed == 0
	statusAllows := statusKnown && p.Status.DisruptionsAllowed > 0

	alwaysAllow := p.Spec.UnhealthyPodEvictionPolicy != nil && *p.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow
	var reasons []string
	sev := finding.Info
	title := ""
	switch {
	case structural != "" && expected == 0:
		// maxUnavailable 0 proves itself; whether it pins a pod now is
		// unknown without the pods.
		sev = finding.Medium
		title = fmt.Sprintf("PodDisruptionBudget %s never allows an eviction", name)
		reasons = append(reasons, structural)
	case structural != "":
		sev = finding.High
		title = fmt.Sprintf("PodDisruptionBudget %s never allows an eviction", name)
		reasons = append(reasons, structural)
	case statusZero && len(v.pods) == 0:
		sev = finding.Medium
		title = fmt.Sprintf("PodDisruptionBudget %s allows no eviction now", name)
		reasons = append(reasons, fmt.Sprintf("its controller reports status.disruptionsAllowed=0 for the %d pods it expects", p.Status.ExpectedPods))
	case statusZero && len(notReady) == 0 && healthy == expected:
		// Every selected pod is healthy, yet the controller allows nothing:
		// it expects more pods than exist (a replica that cannot start), or
		// the budget is as tight as the workload.
		sev = finding.High
		title = fmt.Sprintf("PodDisruptionBudget %s allows no eviction although its pods are healthy", name)
		reasons = append(reasons, fmt.Sprintf("status.disruptionsAllowed is 0 while all %d selected pod%s are Ready (the controller expects %d)",
			expected, check.PluralS(expected), p.Status.ExpectedPods))
	case len(notReady) > 0 && healthy <= desired && (statusZero || (unseen <= 0 && !statusAllows)):
		// Pods the input lacks may be healthy, and a controller that allows
		// disruptions says the budget is not exhausted.
		sev = finding.Medium
		title = fmt.Sprintf("PodDisruptionBudget %s is exhausted by not-Ready pods", name)
		reasons = append(reasons, fmt.Sprintf("%d of %d selected pods are not Ready and %d must stay available, so no healthy pod can be evicted",
			len(notReady), expected, desired))
		if !alwaysAllow && healthy < desired && runningNotReady > 0 {
			reasons = append(reasons, "with unhealthyPodEvictionPolicy unset (IfHealthyBudget) the Running but not-Ready pods cannot be evicted either")
		}
	default:
		return finding.Finding{}, false
	}
	// The evidence, built only for a budget with a finding: most budgets
	// have none, and building their text first was a third of the check's
	// allocations at 100,000 pods.
	switch {
	case len(v.pods) > 0 || v.podsComplete:
		ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s spec.selector=%s matches %d pod%s, %d Ready",
			name, v.selector, len(v.pods), check.PluralS(len(v.pods)), healthy))
	default:
		ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s spec.selector=%s: no pod it matches is in the input, and the Pods of namespace %s are not known to be all there",
			name, v.selector, p.Namespace))
	}
	if v.skipped > 0 {
		ev = append(ev, fmt.Sprintf("of them %d %s DaemonSet or mirror pod%s, which kubectl drain never evicts",
			v.skipped, map[bool]string{true: "is a", false: "are"}[v.skipped == 1], check.PluralS(v.skipped)))
	}
	if unseen > 0 {
		switch expectedFrom {
		case "status.expectedPods":
			items = append(items, finding.Quote(pdbRef, finding.Value("status.expectedPods", p.Status.ExpectedPods)))
		case "workloads":
			for _, w := range v.workloads {
				ev = append(ev, fmt.Sprintf("%s %s/%s: template labels match the budget's selector", w.kind, p.Namespace, w.name))
				items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "apps/v1", Kind: w.kind, Namespace: p.Namespace, Name: w.name},
					finding.Value("spec.replicas", w.replicas)))
			}
		}
	}

	if statusZero {
		items = append(items, finding.Quote(pdbRef, finding.Value("status.disruptionsAllowed", p.Status.DisruptionsAllowed),
			finding.Value("status.currentHealthy", p.Status.CurrentHealthy), finding.Value("status.desiredHealthy", p.Status.DesiredHealthy),
			finding.Value("status.expectedPods", p.Status.ExpectedPods)))
	}
	for i, pod := range notReady {
		if i >= check.MaxListedObjects/5 {
			ev = append(ev, fmt.Sprintf("… and %d more not-Ready pods", len(notReady)-i))
			break
		}
		phase := pod.Status.Phase
		if phase == "" {
			phase = corev1.PodPending
		}
		node := pod.Spec.NodeName
		if node == "" {
			node = "none"
		}
		ev = append(ev, fmt.Sprintf("Pod %s/%s: %s, Ready condition not True (node %s)", pod.Namespace, pod.Name, phase, node))
		items = append(items, finding.Quote(check.ResourceRef(snapshot.Pods, pod.Namespace, pod.Name), finding.Value("status.phase", pod.Status.Phase)))
	}
	if runningNotReady > 0 && !alwaysAllow {
		ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s spec.unhealthyPodEvictionPolicy unset or IfHealthyBudget", name))
	}

	// The pods a drain would try to evict, and their nodes.
	refs := check.NewCappedRefs()
	refs.Add(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name))
	// v.pods itself when the drain skips none of them, as is usual.
	drained := v.pods
	if v.skipped > 0 {
		drained = make([]*snapshot.Pod, 0, len(v.pods)-v.skipped)
		for _, pod := range v.pods {
			if drainSkips(pod) == "" {
				drained = append(drained, pod)
			}
		}
	}
	// v.pods holds each pod once (the index's lists of a namespace and of
	// a selector's pods do).
	refs.AddDistinctPodsAndNodesMarked(drained, marks)
	var cordoned []string
	if cn != nil {
		seen := map[int32]bool{}
		for _, pod := range drained {
			at := cn.nodeOf(pod)
			if at < 0 || !cn.unschedulable[at] || seen[at] {
				continue
			}
			seen[at] = true
			cordoned = append(cordoned, pod.Spec.NodeName)
		}
		sort.Strings(cordoned)
		if len(cordoned) > 0 {
			if sev < finding.High {
				sev = finding.High
			}
			for i, n := range cordoned {
				if i >= 10 {
					ev = append(ev, fmt.Sprintf("… and %d more cordoned nodes", len(cordoned)-i))
					break
				}
				items = append(items, finding.Quote(check.NodeRef(n), finding.Value("spec.unschedulable", true)))
			}
		}
	}
	if sev < finding.High && len(drained) > 0 && !ctx.Complete(snapshot.Nodes) {
		// A cordoned node raises it, and only the nodes show one.
		rule := pdbRuleExhausted
		if structural != "" {
			rule = pdbRuleNoEviction
		}
		ctx.Incomplete(rule, "PodDisruptionBudget %s: nodes were not read completely, and it is high if a node of its pods is cordoned now", name)
	}

	var msg string
	switch {
	case len(v.pods) == 0 && expected > 0:
		msg = fmt.Sprintf("PodDisruptionBudget %s covers %d pods by its %s, none of them in the input: %s.",
			name, expected, map[string]string{"status.expectedPods": "status", "workloads": "matching workloads"}[expectedFrom], strings.Join(reasons, "; "))
		msg += " A drain of any node running one of them retries the eviction until the upgrade that started it times out."
	case len(v.pods) == 0:
		msg = fmt.Sprintf("PodDisruptionBudget %s: %s. The pods it selects are not in the input, so which nodes it pins is unknown;"+
			" a drain of any node running one of them retries the eviction until the upgrade that started it times out.", name, strings.Join(reasons, "; "))
	default:
		msg = fmt.Sprintf("PodDisruptionBudget %s selects %s on %s: %s.",
			name, refs.Summary(snapshot.Pods.Kind, "pod", "pods", 5),
			refs.Summary(snapshot.Nodes.Kind, "node", "nodes", 5), strings.Join(reasons, "; "))
		if unseen > 0 {
			msg += fmt.Sprintf(" The input shows %d of the %d pods it covers.", len(v.pods), expected)
		}
		msg += " A drain of any of those nodes retries the eviction until the upgrade that started it times out."
	}
	if len(cordoned) > 0 {
		if len(cordoned) == 1 {
			msg += " One of those nodes is already cordoned, so a drain may be waiting on this budget now."
		} else {
			msg += fmt.Sprintf(" %d of those nodes are already cordoned, so a drain may be waiting on this budget now.", len(cordoned))
		}
	}
	if owners := podOwners(drained); owners != "" {
		msg += " Pods belong to " + owners + "."
	}

	var fix []string
	if structural != "" || statusZero {
		fix = append(fix, "Let the budget allow at least one disruption: run at least two replicas and use maxUnavailable: 1 "+
			"(or a minAvailable below the replica count); a single-replica workload cannot have a budget that drains can honour")
	}
	if len(notReady) > 0 {
		fix = append(fix, "Fix or remove the not-Ready pods (a Pending pod bound to a node often means the node cannot create its sandbox: "+
			"see pod-sandbox-failures), and set spec.unhealthyPodEvictionPolicy: AlwaysAllow so a crash-looping pod never blocks a drain")
	}
	if len(fix) == 0 {
		fix = append(fix, "Bring the not-Ready pods back to Ready before draining, and set spec.unhealthyPodEvictionPolicy: AlwaysAllow")
	}
	f := finding.Finding{
		Check:       "pdb-blocks-drain",
		Severity:    sev,
		Title:       title,
		Message:     msg,
		Objects:     refs.TakeList(),
		Evidence:    ev,
		Remediation: strings.Join(fix, ". ") + ". If the budget ships inside a chart, override it through the chart's values or ask its maintainers to make it configurable.",
		Cases:       pdbCases(len(notReady) > 0),
	}
	f.AddEvidence(items...)
	return f, true
}

// intOrPercentZero reports whether v is 0 or 0%.
func intOrPercentZero(v *intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return strings.TrimSpace(v.StrVal) == "0%"
}

// podOwners names the controllers of the pods, e.g. "ReplicaSet
// kube-system/coredns-5d78c9869d", at most three.
func podOwners(pods []*snapshot.Pod) string {
	// Keyed by the owner's fields, and its text built once per owner: the
	// pods of a budget share a few owners, and one string per pod was most
	// of this function's cost. The last owner is compared first, without
	// a hash: a budget's pods usually come owner by owner.
	seen := map[[3]string]bool{}
	var out []string
	var last [3]string
	for _, p := range pods {
		for _, o := range p.OwnerReferences {
			if o.Controller == nil || !*o.Controller {
				continue
			}
			k := [3]string{o.Kind, p.Namespace, o.Name}
			if len(out) > 0 && k == last {
				continue
			}
			last = k
			if !seen[k] {
				seen[k] = true
				out = append(out, o.Kind+" "+p.Namespace+"/"+o.Name)
			}
		}
	}
	sort.Strings(out)
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("%d more", len(out)-3))
	}
	return strings.Join(out, ", ")
}

// drainNodes says which nodes are cordoned, by node position, and
// where each pod runs (check.PodNodesOf): a budget's drained pods are
// tested by position, where a lookup of each pod's node name in the
// index's map of nodes (50,000 at 1M pods) missed the caches per pod.
type drainNodes struct {
	s             *snapshot.Snapshot
	podNodes      []int32
	unschedulable []bool
}

func newDrainNodes(s *snapshot.Snapshot) *drainNodes {
	cn := &drainNodes{s: s, podNodes: check.PodNodesOf(s), unschedulable: make([]bool, len(s.Nodes))}
	for i := range s.Nodes {
		cn.unschedulable[i] = s.Nodes[i].Spec.Unschedulable
	}
	return cn
}

// nodeOf is the position of the node pod is bound to (the index's node
// of that name), or -1 when it is bound to none in the input.
func (cn *drainNodes) nodeOf(pod *snapshot.Pod) int32 {
	if i := check.PodPosition(cn.s, pod); i >= 0 {
		return cn.podNodes[i]
	}
	// A pod outside the snapshot's list (none in kubegap): by name.
	n := cn.s.Index().Node(pod.Spec.NodeName)
	for i := range cn.s.Nodes {
		if n != nil && &cn.s.Nodes[i] == n {
			return int32(i)
		}
	}
	return -1
}
