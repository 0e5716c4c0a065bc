package scheduling

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/selector-matches-no-node.yaml
var selectorFactsYAML []byte

// renamedKey is a node label or taint Kubernetes renamed.
type renamedKey struct {
	Old          string   `json:"old"`
	New          string   `json:"new"`
	Kind         string   `json:"kind"`
	DeprecatedIn string   `json:"deprecatedIn"`
	RemovedIn    string   `json:"removedIn"`
	Note         string   `json:"note"`
	Sources      []string `json:"sources"`
}

type selectorFacts struct {
	Renamed []renamedKey `json:"renamed"`
}

var loadSelectorFacts = check.Facts("selector facts", selectorFactsYAML, func(f *selectorFacts) error {
	for _, r := range f.Renamed {
		if r.Old == "" || r.New == "" || (r.Kind != "label" && r.Kind != "taint") || r.RemovedIn == "" || len(r.Sources) == 0 {
			return errors.New("selector facts: every renamed key needs old, new, kind label|taint, removedIn and sources")
		}
	}
	return nil
})

// renamed returns the fact about an old key of a kind, if any.
func (f *selectorFacts) renamed(kind, old string) (renamedKey, bool) {
	for _, r := range f.Renamed {
		if r.Kind == kind && r.Old == old {
			return r, true
		}
	}
	return renamedKey{}, false
}

// Rule IDs.
const (
	ruleNoNode     = "no-matching-node"
	ruleLegacy     = "legacy-master-selector"
	ruleTaint      = "taint-not-tolerated"
	ruleNoopExcl   = "no-op-exclusion"
	caseReddit     = "reddit-pi-day-calico-master-label-2023"
	caseDell       = "dell-csm-master-nodeselector-k8s124-2022"
	caseHetzner    = "hetzner-k3s-upgrade-plan-legacy-master-selector-2026"
	labelMaster    = "node-role.kubernetes.io/master"
	labelCtrlPlane = "node-role.kubernetes.io/control-plane"
)

// templateNeeds are the workloads whose templates the rules judge.
var templateNeeds = []snapshot.Resource{snapshot.Nodes, snapshot.Deployments, snapshot.StatefulSets,
	snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs}

// selectorMatchesNoNodeCheck finds workload templates whose node selection
// no node can meet.
func selectorMatchesNoNodeCheck() check.Check {
	return check.Check{
		ID:       "selector-matches-no-node",
		Title:    "Workloads whose node selectors or tolerations match no node",
		Severity: finding.High,
		Description: "Evaluates the nodeSelector and required node affinity of every Deployment, StatefulSet, " +
			"DaemonSet, Job and CronJob template against the labels of every Node, the way the scheduler does. " +
			"A template no node can host leaves its pods Pending (a DaemonSet runs nowhere), silently: nothing " +
			"fails until someone needs those pods. The common cause is a renamed label: kubeadm stopped applying " +
			"node-role.kubernetes.io/master in 1.24 and its taint in 1.25, which took Reddit down when Calico's " +
			"route reflectors selected on the old label. High for selectors on the old master label while " +
			"control-plane nodes carry only the new one, and for templates whose only matching nodes carry a " +
			"NoSchedule/NoExecute taint they do not tolerate (the master toleration on a control-plane taint); " +
			"high for other Deployments, StatefulSets, Jobs and CronJobs no node matches, lowered to medium when " +
			"cluster-autoscaler or a managed node pool could create a matching node the API does not show, and to " +
			"low when a Karpenter NodePool can launch one; low for DaemonSets (optional-hardware agents such as " +
			"GPU plugins often match no node on purpose); medium for NotIn/DoesNotExist exclusions on the old master " +
			"label where nodes carry only the new one: they exclude nothing, so pods meant to avoid the control plane " +
			"may land there (exclusions of other absent keys, such as Fargate or virtual-kubelet nodes, are meant for " +
			"nodes that may join later and are not reported). Node condition taints (node.kubernetes.io/*) are transient and ignored. Without " +
			"a complete Node list no template is said to match nothing from the nodes present; the scheduler's own verdict is used " +
			"instead: Pending pods whose PodScheduled=False/Unschedulable condition or latest FailedScheduling event says every node " +
			"failed their node affinity/selector (high, medium without the template or when a node could be created) or failed it or " +
			"carried an untolerated taint the message names (medium; condition taints such as node.kubernetes.io/not-ready, and " +
			"taints the message does not name, prove nothing about the template) are reported for their workload, tied through their ReplicaSet or its " +
			"<deployment>-<pod-template-hash> name. Cannot see: node groups of cloud " +
			"autoscalers and Calico BGPPeers (not read; removed-node-labels judges BGPPeers on removed labels). " +
			"system-upgrade-controller Plans (upgrade.cattle.io/v1), with every Node in the input: high for a Plan whose " +
			"spec.nodeSelector requires node-role.kubernetes.io/master, which no node carries (it can complete without " +
			"upgrading anything), medium when other required labels or values match no node (it stays idle, which an opt-in " +
			"label may intend), medium for one that excludes by node-role.kubernetes.io/master while no node carries it and " +
			"nodes carry the control-plane label (it picks the control plane too). A Plan emptied only by its exclusions (an " +
			"agent Plan on a cluster of control-plane nodes only) is not reported.",
		Reads: append(check.Needs(snapshot.Nodes), check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets),
			check.Optional(snapshot.DaemonSets), check.Optional(snapshot.Jobs), check.Optional(snapshot.CronJobs),
			check.Optional(snapshot.KarpenterNodePools), check.Optional(snapshot.Pods), check.Optional(snapshot.Events),
			check.Optional(snapshot.ReplicaSets), check.Optional(snapshot.UpgradePlans)),
		Rules: []check.Rule{
			{ID: ruleNoNode, Summary: "templates whose nodeSelector and required node affinity match no node", Needs: templateNeeds},
			{ID: ruleLegacy, Summary: "templates selecting node-role.kubernetes.io/master on clusters whose control plane carries only the control-plane label", Needs: templateNeeds},
			{ID: ruleTaint, Summary: "templates whose matching nodes all carry a NoSchedule/NoExecute taint they do not tolerate", Needs: templateNeeds},
			{ID: ruleNoopExcl, Summary: "NotIn/DoesNotExist exclusions on a renamed label no node carries any more", Needs: templateNeeds},
			{ID: rulePlanSelector, Summary: "system-upgrade-controller Plans whose node selector matches no node or excludes by a label no node carries",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.UpgradePlans}},
		},
		// Reddit's selectors were Calico BGPPeers, which this check does not
		// read (removed-node-labels does): the same mechanism, not its view.
		Cases: check.Cite(check.Detects(caseDell, caseHetzner), check.Related(caseReddit)),
		Run:   runSelectorMatchesNoNode,
	}
}

// workload is one pod template and its owner.
type workload struct {
	apiVersion, kind string
	meta             *metav1.ObjectMeta
	spec             *corev1.PodSpec
}

func (w workload) ref() finding.ObjectRef { return check.Ref(w.apiVersion, w.kind, w.meta) }
func (w workload) String() string         { return w.kind + " " + w.meta.Namespace + "/" + w.meta.Name }

// workloads lists the templates that may create pods: scaled to zero,
// finished Jobs, Jobs of a CronJob (judged through the CronJob) and
// suspended CronJobs are left out.
func workloads(s *snapshot.Snapshot) []workload {
	var out []workload
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 {
			out = append(out, workload{"apps/v1", "Deployment", &d.ObjectMeta, &d.Spec.Template.Spec})
		}
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 {
			out = append(out, workload{"apps/v1", "StatefulSet", &d.ObjectMeta, &d.Spec.Template.Spec})
		}
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		out = append(out, workload{"apps/v1", "DaemonSet", &d.ObjectMeta, &d.Spec.Template.Spec})
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if check.JobFinished(j) || ownedByCronJob(&j.ObjectMeta) {
			continue
		}
		out = append(out, workload{"batch/v1", "Job", &j.ObjectMeta, &j.Spec.Template.Spec})
	}
	for i := range s.CronJobs {
		c := &s.CronJobs[i]
		if c.Spec.Suspend != nil && *c.Spec.Suspend {
			continue
		}
		out = append(out, workload{"batch/v1", "CronJob", &c.ObjectMeta, &c.Spec.JobTemplate.Spec.Template.Spec})
	}
	return out
}

func ownedByCronJob(m *metav1.ObjectMeta) bool {
	for _, o := range m.OwnerReferences {
		if o.Kind == "CronJob" {
			return true
		}
	}
	return false
}

// selectorRun is one run's state.
type selectorRun struct {
	ctx    *check.Context
	facts  *selectorFacts
	ix     *nodeIndex
	su     *scaleUp
	ctrl   int // nodes labelled control-plane
	master int // nodes labelled master
	// matched memoises the nodes each distinct selection matches.
	matched map[string][]int
	keyBuf  []byte // the selection key matching looks up, reused
	version string
	// groups memoises the evidence of every node grouped by the values of
	// a list of label keys: many templates name the same keys, and each
	// grouping walks every node.
	groups map[string]nodeGroupsEvidence
}

// nodeGroupsEvidence is what addNodeGroups adds to a finding for every
// node and one list of label keys: its items and their evidence lines.
type nodeGroupsEvidence struct {
	items []finding.EvidenceItem
	lines []string
}

// addAllNodeGroups adds to f every node grouped by its values of keys, as
// addNodeGroups(f, r.ix.nodes, labelsOf(keys...)) does, computed once per
// list of keys; each finding gets its own copy of the items.
func (r *selectorRun) addAllNodeGroups(f *finding.Finding, keys []string) {
	memoKey := strings.Join(keys, "\x00")
	g, ok := r.groups[memoKey]
	if !ok {
		var tmp finding.Finding
		addNodeGroups(&tmp, r.ix.nodes, labelsOf(keys...))
		g = nodeGroupsEvidence{items: tmp.EvidenceItems, lines: tmp.Evidence}
		if r.groups == nil {
			r.groups = map[string]nodeGroupsEvidence{}
		}
		r.groups[memoKey] = g
	}
	for _, it := range g.items {
		it.Objects = slices.Clone(it.Objects)
		it.Fields = slices.Clone(it.Fields)
		f.EvidenceItems = append(f.EvidenceItems, it)
	}
	f.Evidence = append(f.Evidence, g.lines...)
}

func runSelectorMatchesNoNode(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadSelectorFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	nodesComplete := ctx.Complete(snapshot.Nodes)
	var verdicts map[string]*verdictGroup
	if !nodesComplete {
		// With every node in the input the run judges the templates
		// itself; without, the scheduler's verdicts on Pending pods are
		// what proves a template matches no node.
		verdicts = placementVerdicts(s)
	}
	if len(s.Nodes) == 0 {
		if nodesComplete {
			for _, r := range []string{ruleNoNode, ruleLegacy, ruleTaint, ruleNoopExcl, rulePlanSelector} {
				ctx.Skip(r, "the cluster has no nodes")
			}
			return nil, nil
		}
		if len(verdicts) == 0 {
			return nil, check.NotEvaluated("no Node in the input: selectors cannot be judged against node labels")
		}
	}
	r := &selectorRun{ctx: ctx, facts: facts, ix: newNodeIndex(s.Nodes), su: newScaleUp(ctx), matched: map[string][]int{}}
	r.ctrl, r.master = len(r.ix.byKey[labelCtrlPlane]), len(r.ix.byKey[labelMaster])
	if v, ev, ok := check.ServerVersion(s); ok {
		r.version = fmt.Sprintf("%s; %s", v.MinorString(), ev)
	}
	var out []finding.Finding
	var unknown []string
	templates := map[string]workload{}
	found := map[string]bool{}
	// The templates are keyed (a string each) only for the scheduler's
	// verdicts, which exist only when the nodes are not all in the input.
	keyed := len(verdicts) > 0
	for _, w := range workloads(s) {
		var key string
		if keyed {
			key = w.kind + "/" + w.meta.Namespace + "/" + w.meta.Name
			templates[key] = w
		}
		sel, ok := selectionOf(w.spec)
		if !ok {
			continue
		}
		nodes := r.matching(sel)
		if len(nodes) == 0 {
			if !nodesComplete {
				if _, proven := verdicts[key]; !keyed || !proven {
					unknown = append(unknown, w.String())
				}
				continue
			}
			out = append(out, r.noNodeFinding(w, sel))
			found[key] = true
			continue
		}
		if f, ok := r.taintFinding(w, sel, nodes, nodesComplete); ok {
			out = append(out, f)
			found[key] = true
		}
		if nodesComplete {
			if f, ok := r.noopFinding(w, sel); ok {
				out = append(out, f)
			}
		}
	}
	out = append(out, r.verdictFindings(verdicts, templates, found)...)
	out = append(out, r.planFindings(nodesComplete)...)
	if !nodesComplete {
		reason := "the Node list is not complete, so a template matching none of the nodes present may match one that is not"
		if len(unknown) > 0 {
			reason += fmt.Sprintf(" (%s: %s)", check.Plural(len(unknown), "template", "templates"), check.ListText(unknown, 5))
		}
		for _, id := range []string{ruleNoNode, ruleLegacy, ruleTaint, ruleNoopExcl} {
			ctx.Incomplete(id, "%s", reason)
		}
	}
	return out, nil
}

// matching returns the nodes meeting any of sel's terms, memoised.
func (r *selectorRun) matching(sel selection) []int {
	r.keyBuf = sel.appendKey(r.keyBuf[:0])
	if m, ok := r.matched[string(r.keyBuf)]; ok { // looked up without a string per template
		return m
	}
	key := string(r.keyBuf)
	var out []int
	seen := map[int]bool{}
	for _, t := range sel.terms {
		for _, i := range r.ix.matching(t) {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	r.matched[key] = out
	return out
}

// legacyMaster reports whether sel asks for the old master label while no
// node carries it and control-plane nodes carry the new one.
func (r *selectorRun) legacyMaster(sel selection) bool {
	if r.master > 0 || r.ctrl == 0 {
		return false
	}
	for _, t := range sel.terms {
		for _, q := range t {
			if !q.field && q.key == labelMaster && q.positive() {
				return true
			}
		}
	}
	return false
}

// requirementEvidence says, per requirement, how many nodes meet it alone.
func (r *selectorRun) requirementEvidence(sel selection) []string {
	var ev []string
	total := len(r.ix.nodes)
	for ti, t := range sel.terms {
		prefix := "requires"
		if len(sel.terms) > 1 {
			prefix = fmt.Sprintf("term %d of %d requires", ti+1, len(sel.terms))
		}
		for _, q := range t {
			ev = append(ev, fmt.Sprintf("%s %s: %d of %d nodes meet it", prefix, q, r.ix.alone(q), total))
			if len(ev) >= check.MaxEvidence {
				return ev
			}
		}
	}
	if sel.noTerms {
		ev = append(ev, "requiredDuringSchedulingIgnoredDuringExecution has no non-empty nodeSelectorTerms, which matches no node")
	}
	return ev
}

func (r *selectorRun) noNodeFinding(w workload, sel selection) finding.Finding {
	total := len(r.ix.nodes)
	ev := r.requirementEvidence(sel)
	f := finding.Finding{
		Check:   "selector-matches-no-node",
		Objects: []finding.ObjectRef{w.ref()},
	}
	if r.legacyMaster(sel) {
		lbl, _ := r.facts.renamed("label", labelMaster)
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s selects nodes by the removed %s label", w, labelMaster)
		f.Message = fmt.Sprintf("%s requires the node label %s, which no node carries: %s carry %s instead. "+
			"Kubernetes deprecated the old label in %s and kubeadm stopped applying it in %s, so after an upgrade "+
			"these pods have nowhere to run; Reddit lost its pod network for hours when Calico's route reflectors "+
			"selected on it.", w, labelMaster, check.Plural(r.ctrl, "node", "nodes"), labelCtrlPlane, lbl.DeprecatedIn, lbl.RemovedIn)
		f.Remediation = fmt.Sprintf("Select %s (and tolerate the %s taint) instead of the master label; search Helm values, "+
			"operators' custom resources and CNI configuration for other references to it before the next upgrade.", labelCtrlPlane, labelCtrlPlane)
		f.Cases = []string{caseReddit, caseDell}
		ev = append(ev, fmt.Sprintf("%s %s %s, 0 carry %s (%s)", check.Plural(r.ctrl, "node", "nodes"), carryVerb(r.ctrl), labelCtrlPlane,
			labelMaster, strings.TrimSpace(lbl.Note)))
		if r.version != "" {
			ev = append(ev, "control plane "+r.version)
		}
		f.Evidence = ev
		r.addSelectionEvidence(&f, w, sel)
		return f
	}
	f.Cases = []string{caseReddit, caseDell}
	f.Title = fmt.Sprintf("%s requires nodes that do not exist", w)
	what := "its pods stay Pending"
	if w.kind == "DaemonSet" {
		what = "it runs on no node"
	}
	f.Message = fmt.Sprintf("The node selection of %s matches none of the %d nodes, so %s. A label that was renamed, "+
		"removed with a node pool or never applied leaves workloads stranded without any error until they are needed.",
		w, total, what)
	f.Remediation = "Fix the nodeSelector or required node affinity to labels the intended nodes carry (kubectl get nodes --show-labels), " +
		"or label those nodes; if the workload is meant for hardware this cluster does not have, scale it to zero or remove it."
	how := r.su.couldCreate(sel)
	switch {
	case w.kind == "DaemonSet":
		f.Severity = finding.Low
		f.Message += " DaemonSets for optional hardware often match no node on purpose; make sure this one is such a case."
	case how == "":
		f.Severity = finding.High
	case strings.HasPrefix(how, "Karpenter NodePool"):
		f.Severity = finding.Low
		f.Message += " " + how + ", so this may only mean no such node is needed yet."
	default:
		f.Severity = finding.Medium
		f.Message += " However, " + how + "."
	}
	if how != "" {
		ev = append(ev, how)
	}
	f.Evidence = ev
	r.addSelectionEvidence(&f, w, sel)
	return f
}

// addSelectionEvidence quotes the template's node selection and the nodes'
// values of the labels it names, grouped: what "k of n nodes meet it" is
// counted from.
func (r *selectorRun) addSelectionEvidence(f *finding.Finding, w workload, sel selection) {
	if it, ok := selectionItem(w); ok {
		f.AddEvidence(it)
	}
	var keys []string
	for _, t := range sel.terms {
		for _, q := range t {
			if !q.field && !slices.Contains(keys, q.key) {
				keys = append(keys, q.key)
			}
		}
	}
	if len(keys) > 0 {
		r.addAllNodeGroups(f, keys)
	}
}

// conditionTaint reports taints that reflect node state or lifecycle
// rather than placement intent: the node.kubernetes.io/* condition taints,
// the cloud provider's start-up taint and cluster-autoscaler's scale-down
// marks. They come and go; judging placement by them would report noise.
func conditionTaint(t corev1.Taint) bool {
	return strings.HasPrefix(t.Key, "node.kubernetes.io/") || strings.HasPrefix(t.Key, "node.cloudprovider.kubernetes.io/") ||
		t.Key == "ToBeDeletedByClusterAutoscaler" || t.Key == "DeletionCandidateOfClusterAutoscaler"
}

// repelling is the first NoSchedule/NoExecute taint of node i that w does
// not tolerate, condition taints aside.
func (r *selectorRun) repelling(w workload, i int) (corev1.Taint, bool) {
	for _, t := range r.ix.nodes[i].Spec.Taints {
		if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !conditionTaint(t) && !tolerates(w.spec.Tolerations, t) {
			return t, true
		}
	}
	return corev1.Taint{}, false
}

func (r *selectorRun) repels(w workload, i int) bool {
	_, ok := r.repelling(w, i)
	return ok
}

// taintFinding reports a template whose matching nodes all repel it.
func (r *selectorRun) taintFinding(w workload, sel selection, nodes []int, nodesComplete bool) (finding.Finding, bool) {
	repelled := map[string]int{}
	var example corev1.Taint
	for _, i := range nodes {
		t, blocked := r.repelling(w, i)
		if !blocked {
			return finding.Finding{}, false
		}
		repelled[t.Key+"="+t.Value+":"+string(t.Effect)]++
		example = t
	}
	if !nodesComplete {
		// Nodes not in the input might match and accept the pods.
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check:    "selector-matches-no-node",
		Severity: finding.Medium,
		Title:    fmt.Sprintf("%s selects only nodes whose taints it does not tolerate", w),
		Objects:  []finding.ObjectRef{w.ref()},
		Cases:    []string{caseDell},
	}
	refs := []string{}
	for _, i := range nodes {
		if len(f.Objects) > check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, check.NodeRef(r.ix.nodes[i].Name))
		refs = append(refs, r.ix.nodes[i].Name)
	}
	f.Message = fmt.Sprintf("%s matches %s, and every one carries a NoSchedule or NoExecute taint the template does not tolerate, so its pods cannot be placed.",
		w, check.Plural(len(nodes), "node", "nodes"))
	var tolMaster bool
	for _, t := range w.spec.Tolerations {
		tolMaster = tolMaster || t.Key == labelMaster
	}
	if example.Key == labelCtrlPlane && tolMaster {
		tnt, _ := r.facts.renamed("taint", labelMaster)
		f.Severity = finding.High
		f.Message += fmt.Sprintf(" It tolerates the old %s taint, which kubeadm stopped applying in %s; the control-plane nodes now carry %s.",
			labelMaster, tnt.RemovedIn, labelCtrlPlane)
	}
	f.Remediation = "Add a toleration for the taint the intended nodes carry (for control-plane nodes: key " + labelCtrlPlane +
		", effect NoSchedule), or select nodes the workload is allowed on."
	keys := make([]string, 0, len(repelled))
	for k := range repelled {
		keys = append(keys, k)
	}
	slices.Sort(keys) // map order is random; evidence is not
	for _, k := range keys {
		f.Evidence = append(f.Evidence, fmt.Sprintf("%d matching nodes carry taint %s, not tolerated", repelled[k], k))
	}
	f.Evidence = append(f.Evidence, "matching nodes: "+check.ListText(refs, 10))
	// The template's selection and tolerations as read, and each matching
	// node's taint that repels it, grouped.
	if it, ok := selectionItem(w); ok {
		f.AddEvidence(it)
	}
	f.AddEvidence(tolerationsItem(w))
	matching := make([]*corev1.Node, 0, len(nodes))
	for _, i := range nodes {
		matching = append(matching, r.ix.nodes[i])
	}
	addNodeGroups(&f, matching, func(n *corev1.Node) []finding.Field {
		t, _ := r.repelling(w, r.ix.byName[n.Name])
		return taintFields(n, t)
	})
	return f, true
}

// noopFinding reports NotIn/DoesNotExist requirements on a renamed label
// that no node carries any more while nodes carry its new name: the
// exclusion was written to keep pods off those nodes and now excludes
// nothing. Exclusions of other absent keys are left alone: they are
// usually written for nodes that may join later (Fargate, virtual-kubelet,
// Windows), and excluding nothing today is what they mean to do.
func (r *selectorRun) noopFinding(w workload, sel selection) (finding.Finding, bool) {
	var noop, ev, keys []string
	for _, t := range sel.terms {
		for _, q := range t {
			if q.field || q.positive() || len(r.ix.byKey[q.key]) > 0 {
				continue
			}
			ren, ok := r.facts.renamed("label", q.key)
			if !ok || len(r.ix.byKey[ren.New]) == 0 {
				continue
			}
			noop = append(noop, q.String())
			keys = append(keys, q.key, ren.New)
			ev = append(ev, fmt.Sprintf("%s: no node of %d carries %s; %d carry %s (%s)", q, len(r.ix.nodes), q.key,
				len(r.ix.byKey[ren.New]), ren.New, strings.TrimSpace(ren.Note)))
		}
	}
	if len(noop) == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check:    "selector-matches-no-node",
		Severity: finding.Medium,
		Title:    fmt.Sprintf("%s excludes nodes by a removed label, so it excludes none", w),
		Message: fmt.Sprintf("%s excludes nodes with %s, but no node carries that label any more: the nodes it was meant "+
			"to avoid now carry the new label and are no longer excluded. hetzner-k3s upgrade Plans built this way "+
			"targeted the control plane and stalled.", w, strings.Join(noop, "; ")),
		Objects:     []finding.ObjectRef{w.ref()},
		Evidence:    ev,
		Remediation: "Exclude by the label the nodes carry now (for control-plane nodes: " + labelCtrlPlane + " DoesNotExist).",
		Cases:       []string{caseHetzner},
	}
	// The selection as read, and the nodes' values of the excluded keys
	// (absent on every node) and their new names where those have values.
	if it, ok := selectionItem(w); ok {
		f.AddEvidence(it)
	}
	r.addAllNodeGroups(&f, keys)
	return f, true
}
