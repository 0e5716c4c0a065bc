package availability

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

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
		cs = append(cs, caseAzureCNIGlibc)
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
	pods     []*snapshot.Pod // active (not terminal) pods it selects; may be the index's own list, so only read
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
	// Cordoned nodes are judged only from a node list that was read.
	var cordoned *drainNodes
	if s.Status(snapshot.Nodes).Status == snapshot.StatusRead {
		cordoned = newDrainNodes(s)
	}
	templates := newPDBTemplates(s)

	var out []finding.Finding
	views := make([]pdbView, 0, len(s.PodDisruptionBudgets))
	// Each pod's budgets by the pod's position: its first budget in a
	// slice, the rest, for the few pods two budgets select, in a map. A
	// map of every selected pod's pointer cost a hash per pod.
	budgetsOf := podBudgets{first: make([]int32, len(s.Pods)), more: map[int][]int{}}
	for i := range s.PodDisruptionBudgets {
		p := &s.PodDisruptionBudgets[i]
		v := pdbView{pdb: p, podsComplete: ctx.CompleteIn(snapshot.Pods, p.Namespace)}
		var candidates []*snapshot.Pod
		switch {
		case p.Spec.Selector == nil:
			// policy/v1: a null selector selects no pod.
			v.selector, v.none = "<null>", true
		default:
			sel, err := check.SelectorOf(p.Spec.Selector)
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
		// The matches themselves until a terminal one, a copy from there on.
		v.pods = candidates
		copied := false
		for i, pod := range candidates {
			if check.PodTerminal(pod) {
				if !copied {
					v.pods, copied = append(make([]*snapshot.Pod, 0, len(candidates)-1), candidates[:i]...), true
				}
				continue
			}
			if copied {
				v.pods = append(v.pods, pod)
			}
			if drainSkips(pod) != "" {
				v.skipped++
				continue
			}
			budgetsOf.add(s, pod, len(views))
		}
		views = append(views, v)
	}

	// The nodes of a finding's pods, told apart by position.
	marks := check.NewPodNodeMarks(s)
	for i := range views {
		if f, ok := pdbBudgetFinding(ctx, &views[i], cordoned, marks); ok {
			out = append(out, f)
		}
	}
	out = append(out, pdbOverlapFindings(views, budgetsOf.overlaps(s))...)
	return out, nil
}

// podBudgets holds the budgets that select each pod, by the pod's
// position in the snapshot (check.PodPosition): first is the first
// budget plus one (0: none yet), more the full list of a pod two or more
// budgets select. A pod outside s.Pods (none in kubegap) goes by pointer.
type podBudgets struct {
	first   []int32
	more    map[int][]int
	outside map[*snapshot.Pod][]int
}

func (b *podBudgets) add(s *snapshot.Snapshot, pod *snapshot.Pod, budget int) {
	i := check.PodPosition(s, pod)
	switch {
	case i < 0:
		if b.outside == nil {
			b.outside = map[*snapshot.Pod][]int{}
		}
		b.outside[pod] = append(b.outside[pod], budget)
	case b.first[i] == 0:
		b.first[i] = int32(budget) + 1
	case b.more[i] == nil:
		b.more[i] = []int{int(b.first[i]) - 1, budget}
	default:
		b.more[i] = append(b.more[i], budget)
	}
}

// overlaps is every pod two or more budgets select, with those budgets in
// the order they were added.
func (b *podBudgets) overlaps(s *snapshot.Snapshot) map[*snapshot.Pod][]int {
	out := make(map[*snapshot.Pod][]int, len(b.more))
	for i, bs := range b.more {
		out[&s.Pods[i]] = bs
	}
	for pod, bs := range b.outside {
		if len(bs) > 1 {
			out[pod] = bs
		}
	}
	return out
}

// pdbTemplates holds the pod templates of the input's Deployments and
// StatefulSets by namespace, so matching a budget against them costs the
// workloads of its namespace rather than of the cluster: scanning every
// workload for every budget made this check quadratic (at 1M pods it was
// most of the checks' CPU time). Within a namespace a selector with an
// equality requirement (app=web) is matched only against the templates
// with that label value, indexed per namespace and label key the first
// time a selector asks for the key, as snapshot.Index.PodsMatching does for
// pods: a namespace's budgets times its templates was a tenth of the check.
type pdbTemplates struct {
	byNS    map[string][]pdbTemplate
	byLabel map[[2]string]map[string][]int
}

type pdbTemplate struct {
	labels labels.Set
	pdbWorkload
}

func newPDBTemplates(s *snapshot.Snapshot) pdbTemplates {
	t := pdbTemplates{byNS: map[string][]pdbTemplate{}, byLabel: map[[2]string]map[string][]int{}}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		t.byNS[d.Namespace] = append(t.byNS[d.Namespace], pdbTemplate{labels.Set(d.Spec.Template.Labels),
			pdbWorkload{kind: snapshot.Deployments.Kind, name: d.Name, replicas: check.SpecReplicas(d.Spec.Replicas)}})
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		t.byNS[d.Namespace] = append(t.byNS[d.Namespace], pdbTemplate{labels.Set(d.Spec.Template.Labels),
			pdbWorkload{kind: snapshot.StatefulSets.Kind, name: d.Name, replicas: check.SpecReplicas(d.Spec.Replicas)}})
	}
	return t
}

// matching lists the Deployments and StatefulSets of namespace ns whose
// pod template sel matches, Deployments first, in input order.
func (t pdbTemplates) matching(ns string, sel labels.Selector) []pdbWorkload {
	all := t.byNS[ns]
	var out []pdbWorkload
	if key, value, ok := snapshot.EqualityRequirement(sel); ok {
		for _, i := range t.withLabel(ns, key)[value] {
			if sel.Matches(all[i].labels) {
				out = append(out, all[i].pdbWorkload)
			}
		}
		return out
	}
	for _, w := range all {
		if sel.Matches(w.labels) {
			out = append(out, w.pdbWorkload)
		}
	}
	return out
}

// withLabel returns the positions in byNS[ns] of the templates that have
// label key, by its value, each list in input order.
func (t pdbTemplates) withLabel(ns, key string) map[string][]int {
	byValue, ok := t.byLabel[[2]string{ns, key}]
	if !ok {
		byValue = map[string][]int{}
		for i, w := range t.byNS[ns] {
			if v, has := w.labels[key]; has {
				byValue[v] = append(byValue[v], i)
			}
		}
		t.byLabel[[2]string{ns, key}] = byValue
	}
	return byValue
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
