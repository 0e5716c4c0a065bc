package availability

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// caseAzureCNIGlibc is the founding incident: pods that could not start
// used up the budget of their healthy siblings, and the node-pool upgrade
// stalled (see pdbCases).
const caseAzureCNIGlibc = "azure-cni-v2-glibc"

// pdbCases returns the cases a finding cites, as a fresh slice: the two
// upgrade failures caused by zero budgets, plus, when not-Ready pods are
// involved, the azure-cni glibc case, where pods that could not start
// exhausted the budget of their healthy siblings.
func pdbCases(notReady bool) []string {
	cs := []string{"azure-workload-identity-pdb-blocks-aks-upgrade", "kubeflow-pdbs-block-aks-upgrade"}
	if notReady {
		cs = append(cs, "azure-cni-v2-glibc")
	}
	return cs
}

// pdbBlocksDrainCheck finds PodDisruptionBudgets that make node drains hang:
// budgets that can never allow an eviction, budgets already exhausted by
// not-Ready pods, pods covered by more than one budget (the eviction API
// refuses those outright) and budgets that select nothing.
func pdbBlocksDrainCheck() check.Check {
	return check.Check{
		ID:       "pdb-blocks-drain",
		Title:    "PodDisruptionBudgets that block node drain",
		Severity: finding.High,
		Description: "Node upgrades drain nodes through the eviction API, which honours PodDisruptionBudgets. " +
			"A budget with maxUnavailable 0, or a minAvailable at or above the number of pods it selects, never " +
			"allows an eviction, so every drain of a node running one of its pods retries until the upgrade " +
			"gives up (AKS then marks the cluster Failed). The check also reports budgets that not-Ready pods " +
			"have already exhausted, pods selected by more than one budget (eviction fails for them), and " +
			"budgets whose selector matches no pod. kubectl drain never evicts DaemonSet pods or mirror (static) " +
			"pods, so a budget that covers only those holds up no drain. A budget with maxUnavailable 0 is reported even " +
			"without pods in the input; where Pods are incomplete, the budget's status and the Deployments and " +
			"StatefulSets its selector matches give the pod count, and \"selects no pods\" is said only when " +
			"every Pod of the namespace was read and no workload or status says otherwise. policy/v1beta1 " +
			"budgets with an empty selector select no pod, as that version defined. Nodes, when read, show " +
			"which pinned pods sit on cordoned nodes.",
		Reads: append(check.Needs(snapshot.PodDisruptionBudgets, snapshot.Pods),
			check.Optional(snapshot.Nodes), check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets)),
		Rules: []check.Rule{
			{ID: pdbRuleNoEviction, Summary: "A budget with maxUnavailable 0, or a minAvailable at or above the pods it selects, never allows an eviction",
				Needs: []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods}},
			{ID: pdbRuleExhausted, Summary: "A budget whose not-Ready pods, or whose controller, allow no eviction now",
				Needs: []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods}},
			{ID: pdbRuleOverlap, Summary: "Pods selected by more than one budget, which the eviction API refuses to evict",
				Needs: []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods}},
			{ID: pdbRuleSelectsNothing, Summary: "A budget whose selector matches no pod",
				Needs: []snapshot.Resource{snapshot.PodDisruptionBudgets, snapshot.Pods}},
		},
		Cases: check.Graded(pdbCases(true), check.Prevents("azure-workload-identity-pdb-blocks-aks-upgrade", "kubeflow-pdbs-block-aks-upgrade"), check.Detects(caseAzureCNIGlibc)),
		Run:   runPDBBlocksDrain,
	}
}

// Rules of pdb-blocks-drain.
const (
	pdbRuleNoEviction     = "no-eviction-allowed"
	pdbRuleExhausted      = "exhausted"
	pdbRuleOverlap        = "overlapping-budgets"
	pdbRuleSelectsNothing = "selects-nothing"
)

// pdbView is what the check learned about one budget.
type pdbView struct {
	pdb      *policyv1.PodDisruptionBudget
	pods     []*snapshot.Pod // active (not terminal) pods it selects
	selector string
	// none: the selector selects no pod by definition (null, or {} in
	// policy/v1beta1), whatever the input holds.
	none bool
	// podsComplete: every Pod of the budget's namespace is in the input.
	podsComplete bool
	// skipped counts selected pods a drain leaves alone (DaemonSet and
	// mirror pods). They count in the budget's arithmetic, as the
	// disruption controller counts them, but a budget that covers nothing
	// else never holds up a drain.
	skipped int
	// workloads are the Deployments and StatefulSets of the input whose
	// pod template the selector matches, with their replicas.
	workloads []pdbWorkload
}

type pdbWorkload struct {
	kind, name string
	replicas   int32
}

// expected is the number of pods the budget covers as far as the input
// shows: the pods themselves when every Pod of the namespace was read;
// otherwise the most that the pods seen, the controller's status or the
// matching workloads' replicas say, with where that number came from.
func (v *pdbView) expected() (int, string) {
	n, from := len(v.pods), "pods"
	if v.podsComplete || v.none {
		return n, from
	}
	if pdbStatusKnown(v.pdb) && int(v.pdb.Status.ExpectedPods) > n {
		n, from = int(v.pdb.Status.ExpectedPods), "status.expectedPods"
	}
	var replicas int
	for _, w := range v.workloads {
		replicas += int(w.replicas)
	}
	if replicas > n {
		n, from = replicas, "workloads"
	}
	return n, from
}

func pdbStatusKnown(p *policyv1.PodDisruptionBudget) bool {
	return p.Status.ObservedGeneration > 0 || p.Status.ExpectedPods > 0 || len(p.Status.Conditions) > 0
}

// drainSkips reports why kubectl drain never evicts a pod, or "" when it
// does: DaemonSet pods would be recreated at once, and mirror pods of
// static pods cannot be deleted through the API server.
func drainSkips(p *snapshot.Pod) string {
	if _, ok := p.Annotations["kubernetes.io/config.mirror"]; ok {
		return "mirror pod"
	}
	for _, o := range p.OwnerReferences {
		if o.Controller != nil && *o.Controller && o.Kind == snapshot.DaemonSets.Kind {
			return "DaemonSet pod"
		}
	}
	return ""
}

func runPDBBlocksDrain(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	if len(s.PodDisruptionBudgets) == 0 {
		return nil, nil
	}
	ix := s.Index()
	nodesRead := s.Status(snapshot.Nodes).Status == snapshot.StatusRead
	templates := newPDBTemplates(s)

	var out []finding.Finding
	views := make([]pdbView, 0, len(s.PodDisruptionBudgets))
	budgetsOf := map[*snapshot.Pod][]int{}
	for i := range s.PodDisruptionBudgets {
		p := &s.PodDisruptionBudgets[i]
		v := pdbView{pdb: p, podsComplete: ctx.CompleteIn(snapshot.Pods, p.Namespace)}
		var candidates []*snapshot.Pod
		switch {
		case p.Spec.Selector == nil:
			// policy/v1: a null selector selects no pod.
			v.selector, v.none = "<null>", true
		default:
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err != nil {
				// The API server would have rejected it; from files, say so.
				out = append(out, pdbInvalidSelectorFinding(p, err))
				continue
			}
			v.selector = sel.String()
			switch {
			case sel.Empty() && snapshot.OriginalAPIVersion(p) == "policy/v1beta1":
				// policy/v1beta1 defined an empty selector as selecting no pod.
				v.selector, v.none = "{} (policy/v1beta1: selects no pod)", true
			case sel.Empty():
				// policy/v1: an empty selector selects every pod of the namespace.
				candidates = ix.PodsInNamespace(p.Namespace)
				v.selector = "{} (every pod in the namespace)"
				v.workloads = templates.matching(p.Namespace, labels.Everything())
			default:
				candidates = ix.PodsMatching(p.Namespace, sel)
				v.workloads = templates.matching(p.Namespace, sel)
			}
		}
		for _, pod := range candidates {
			if check.PodTerminal(pod) {
				continue
			}
			v.pods = append(v.pods, pod)
			if drainSkips(pod) != "" {
				v.skipped++
				continue
			}
			budgetsOf[pod] = append(budgetsOf[pod], len(views))
		}
		views = append(views, v)
	}

	for i := range views {
		if f, ok := pdbBudgetFinding(ctx, &views[i], ix, nodesRead); ok {
			out = append(out, f)
		}
	}
	out = append(out, pdbOverlapFindings(views, budgetsOf)...)
	return out, nil
}

// pdbTemplates holds the pod templates of the input's Deployments and
// StatefulSets by namespace, so matching a budget against them costs the
// workloads of its namespace rather than of the cluster: scanning every
// workload for every budget made this check quadratic (at 1M pods it was
// most of the checks' CPU time).
type pdbTemplates map[string][]pdbTemplate

type pdbTemplate struct {
	labels labels.Set
	pdbWorkload
}

func newPDBTemplates(s *snapshot.Snapshot) pdbTemplates {
	t := pdbTemplates{}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		t[d.Namespace] = append(t[d.Namespace], pdbTemplate{labels.Set(d.Spec.Template.Labels),
			pdbWorkload{kind: snapshot.Deployments.Kind, name: d.Name, replicas: check.SpecReplicas(d.Spec.Replicas)}})
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		t[d.Namespace] = append(t[d.Namespace], pdbTemplate{labels.Set(d.Spec.Template.Labels),
			pdbWorkload{kind: snapshot.StatefulSets.Kind, name: d.Name, replicas: check.SpecReplicas(d.Spec.Replicas)}})
	}
	return t
}

// matching lists the Deployments and StatefulSets of namespace ns whose
// pod template sel matches, Deployments first, in input order.
func (t pdbTemplates) matching(ns string, sel labels.Selector) []pdbWorkload {
	var out []pdbWorkload
	for _, w := range t[ns] {
		if sel.Matches(w.labels) {
			out = append(out, w.pdbWorkload)
		}
	}
	return out
}

// pdbSelectsNothing judges a budget that selects no pod a drain evicts in
// the input. It says so only when that is proven: by the selector itself,
// or by every Pod of the namespace with no workload or status saying
// otherwise.
func pdbSelectsNothing(ctx *check.Context, v *pdbView) (finding.Finding, bool) {
	p := v.pdb
	name := p.Namespace + "/" + p.Name
	if !v.none && (!v.podsComplete || len(v.workloads) > 0 || p.Status.ExpectedPods > 0) {
		return finding.Finding{}, false
	}
	var ev []string
	if v.none {
		ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s spec.selector=%s selects no pod by definition", name, v.selector))
	} else {
		ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s spec.selector=%s matches 0 pods (every Pod of namespace %s was read)", name, v.selector, p.Namespace))
		var kinds []string
		for _, r := range []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets} {
			if ctx.Present(r) {
				kinds = append(kinds, r.Kind)
			}
		}
		if len(kinds) > 0 {
			ev = append(ev, fmt.Sprintf("no %s in the input has a pod template the selector matches", strings.Join(kinds, " or ")))
		}
		if pdbStatusKnown(p) {
			ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s status.expectedPods=0", name))
		}
	}
	f := finding.Finding{
		Check:    "pdb-blocks-drain",
		Severity: finding.Low,
		Title:    fmt.Sprintf("PodDisruptionBudget %s selects no pods", name),
		Message: fmt.Sprintf("The selector of PodDisruptionBudget %s (%s) matches no running pod in namespace %s, "+
			"so it protects nothing: the workload it was written for can be drained all at once. "+
			"It often outlives a relabelled or renamed workload and starts blocking drains again when pods with the old labels return.",
			name, v.selector, p.Namespace),
		Objects:     []finding.ObjectRef{check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name)},
		Evidence:    ev,
		Remediation: "Point the selector at the labels of the workload's pod template, or delete the budget if the workload is gone.",
		Cases:       pdbCases(false),
	}
	f.AddEvidence(finding.Quote(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name), selectorFields(p)...))
	return f, true
}

// pdbBudgetFinding judges one budget on its own.
func pdbBudgetFinding(ctx *check.Context, v *pdbView, ix *snapshot.Index, nodesRead bool) (finding.Finding, bool) {
	p := v.pdb
	name := p.Namespace + "/" + p.Name
	expected, expectedFrom := v.expected()
	refs := check.NewCappedRefs()
	refs.Add(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name))

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

	// The controller's own verdict, when the input carries status.
	statusKnown := pdbStatusKnown(p)
	statusZero := statusKnown && p.Status.DisruptionsAllowed == 0
	statusAllows := statusKnown && p.Status.DisruptionsAllowed > 0
	if statusZero {
		items = append(items, finding.Quote(pdbRef, finding.Value("status.disruptionsAllowed", p.Status.DisruptionsAllowed),
			finding.Value("status.currentHealthy", p.Status.CurrentHealthy), finding.Value("status.desiredHealthy", p.Status.DesiredHealthy),
			finding.Value("status.expectedPods", p.Status.ExpectedPods)))
	}

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
	var drained []*snapshot.Pod
	for _, pod := range v.pods {
		if drainSkips(pod) == "" {
			drained = append(drained, pod)
			refs.AddPodAndNode(pod)
		}
	}
	var cordoned []string
	if nodesRead {
		seen := map[string]bool{}
		for _, pod := range drained {
			n := pod.Spec.NodeName
			if n == "" || seen[n] {
				continue
			}
			seen[n] = true
			if node := ix.Node(n); node != nil && node.Spec.Unschedulable {
				cordoned = append(cordoned, n)
			}
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
		Objects:     refs.List(),
		Evidence:    ev,
		Remediation: strings.Join(fix, ". ") + ". If the budget ships inside a chart, override it through the chart's values or ask its maintainers to make it configurable.",
		Cases:       pdbCases(len(notReady) > 0),
	}
	f.AddEvidence(items...)
	return f, true
}

// pdbOverlapFindings reports pods selected by more than one budget, one
// finding per set of budgets: the eviction API refuses to evict such a pod
// at all, whatever the budgets allow.
func pdbOverlapFindings(views []pdbView, budgetsOf map[*snapshot.Pod][]int) []finding.Finding {
	type group struct {
		budgets []int
		pods    []*snapshot.Pod
	}
	groups := map[string]*group{}
	for pod, bs := range budgetsOf {
		if len(bs) < 2 {
			continue
		}
		parts := make([]string, len(bs))
		for i, b := range bs {
			parts[i] = fmt.Sprint(b)
		}
		key := strings.Join(parts, ",")
		g := groups[key]
		if g == nil {
			g = &group{budgets: bs}
			groups[key] = g
		}
		g.pods = append(g.pods, pod)
	}
	keys := slices.Sorted(maps.Keys(groups))

	var out []finding.Finding
	for _, k := range keys {
		g := groups[k]
		sort.Slice(g.pods, func(i, j int) bool {
			a, b := g.pods[i], g.pods[j]
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			return a.Name < b.Name
		})
		refs := check.NewCappedRefs()
		var names, ev []string
		for _, b := range g.budgets {
			p := views[b].pdb
			refs.Add(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name))
			names = append(names, p.Namespace+"/"+p.Name)
			ev = append(ev, fmt.Sprintf("PodDisruptionBudget %s/%s spec.selector=%s", p.Namespace, p.Name, views[b].selector))
		}
		for _, pod := range g.pods {
			refs.AddPodAndNode(pod)
		}
		for i, pod := range g.pods {
			if i >= 5 {
				break
			}
			ev = append(ev, fmt.Sprintf("Pod %s/%s labels %s match all %d budgets", pod.Namespace, pod.Name,
				labels.Set(pod.Labels).String(), len(g.budgets)))
		}
		f := finding.Finding{
			Check:    "pdb-blocks-drain",
			Severity: finding.High,
			Title:    fmt.Sprintf("%d PodDisruptionBudgets select the same pods: %s", len(names), strings.Join(names, ", ")),
			Message: fmt.Sprintf("PodDisruptionBudgets %s all select %s on %s. The eviction API refuses to evict a pod "+
				"covered by more than one budget, so a drain of those nodes fails for these pods every time.",
				strings.Join(names, ", "), refs.Summary(snapshot.Pods.Kind, "pod", "pods", 5),
				refs.Summary(snapshot.Nodes.Kind, "node", "nodes", 5)),
			Objects:     refs.List(),
			Evidence:    ev,
			Remediation: "Keep one budget per workload: narrow the selectors so that no pod matches two budgets, or delete the redundant one.",
			Cases:       pdbCases(false),
		}
		for _, b := range g.budgets {
			p := views[b].pdb
			f.AddEvidence(finding.Quote(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name), selectorFields(p)...))
		}
		out = append(out, f)
	}
	return out
}

// intOrPercentZero reports whether v is 0 or 0%.
func intOrPercentZero(v *intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	return strings.TrimSpace(v.StrVal) == "0%"
}

func pdbInvalidSelectorFinding(p *policyv1.PodDisruptionBudget, err error) finding.Finding {
	name := p.Namespace + "/" + p.Name
	f := finding.Finding{
		Check:       "pdb-blocks-drain",
		Severity:    finding.Low,
		Title:       fmt.Sprintf("PodDisruptionBudget %s has an invalid selector", name),
		Message:     fmt.Sprintf("The selector of PodDisruptionBudget %s cannot be parsed (%v), so it protects nothing.", name, err),
		Objects:     []finding.ObjectRef{check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name)},
		Evidence:    []string{fmt.Sprintf("PodDisruptionBudget %s spec.selector invalid: %v", name, err)},
		Remediation: "Fix the selector so that it matches the labels of the workload's pods.",
		Cases:       pdbCases(false),
	}
	f.AddEvidence(finding.Quote(check.ResourceRef(snapshot.PodDisruptionBudgets, p.Namespace, p.Name), selectorFields(p)...))
	return f
}

// selectorFields quotes a budget's selector as the object writes it: each
// matchLabels entry, each matchExpressions key and operator, or the
// selector's absence or emptiness.
func selectorFields(p *policyv1.PodDisruptionBudget) []finding.Field {
	sel := p.Spec.Selector
	if sel == nil {
		return []finding.Field{finding.Absent("spec.selector")}
	}
	var out []finding.Field
	for _, k := range slices.Sorted(maps.Keys(sel.MatchLabels)) {
		out = append(out, finding.Value("spec.selector.matchLabels["+k+"]", sel.MatchLabels[k]))
	}
	for i, e := range sel.MatchExpressions {
		out = append(out, finding.Value(fmt.Sprintf("spec.selector.matchExpressions[%d].key", i), e.Key),
			finding.Value(fmt.Sprintf("spec.selector.matchExpressions[%d].operator", i), string(e.Operator)))
	}
	if len(out) == 0 {
		out = append(out, finding.Value("spec.selector", "{}"))
	}
	return out
}

// podOwners names the controllers of the pods, e.g. "ReplicaSet
// kube-system/coredns-5d78c9869d", at most three.
func podOwners(pods []*snapshot.Pod) string {
	seen := map[string]bool{}
	var out []string
	for _, p := range pods {
		for _, o := range p.OwnerReferences {
			if o.Controller == nil || !*o.Controller {
				continue
			}
			s := o.Kind + " " + p.Namespace + "/" + o.Name
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	sort.Strings(out)
	if len(out) > 3 {
		out = append(out[:3], fmt.Sprintf("%d more", len(out)-3))
	}
	return strings.Join(out, ", ")
}
