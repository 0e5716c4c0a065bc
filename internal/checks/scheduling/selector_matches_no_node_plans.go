package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	selop "k8s.io/apimachinery/pkg/selection"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// rulePlanSelector judges system-upgrade-controller Plans: the controller
// runs a Plan's upgrade Job on the nodes its spec.nodeSelector (a label
// selector) picks, so a selector on a label no node carries upgrades
// nothing, and an exclusion on such a label excludes nothing. hetzner-k3s
// wrote both on node-role.kubernetes.io/master: its server Plan went
// Complete at once, and its agent Plan picked the control-plane node.
const rulePlanSelector = "upgrade-plan-selector"

// planFindings reports the Plans whose required terms match no node (high
// on the old master label, medium otherwise; see planSelectsNothing) or
// that exclude by the old master label no node carries while nodes carry
// the control-plane one (medium). It needs every Node: a node missing from
// the input may be the one a Plan selects.
func (r *selectorRun) planFindings(nodesComplete bool) []finding.Finding {
	ctx := r.ctx
	if !ctx.Complete(snapshot.UpgradePlans) {
		ctx.Incomplete(rulePlanSelector, "system-upgrade-controller Plans (upgrade.cattle.io) are not in the input")
	}
	plans := ctx.Snapshot.CustomObjects(snapshot.UpgradePlans)
	if !nodesComplete {
		if len(plans) > 0 {
			ctx.Incomplete(rulePlanSelector, "the Node list is not complete, so a Plan matching none of the nodes present may match one that is not")
		}
		return nil
	}
	var out []finding.Finding
	for i := range plans {
		p := &plans[i]
		raw, found, _ := unstructured.NestedMap(p.Object, "spec", "nodeSelector")
		if !found {
			continue // no selector to judge
		}
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, &ls); err != nil {
			ctx.Incomplete(rulePlanSelector, "Plan %s/%s: spec.nodeSelector is not a label selector: %v", p.GetNamespace(), p.GetName(), err)
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil {
			ctx.Incomplete(rulePlanSelector, "Plan %s/%s: spec.nodeSelector: %v", p.GetNamespace(), p.GetName(), err)
			continue
		}
		ref := finding.ObjectRef{APIVersion: p.GetAPIVersion(), Kind: p.GetKind(), Namespace: p.GetNamespace(), Name: p.GetName()}
		selText := finding.JSONText(raw)
		var matched []*corev1.Node
		for j := range ctx.Snapshot.Nodes {
			if n := &ctx.Snapshot.Nodes[j]; sel.Matches(labels.Set(n.Labels)) {
				matched = append(matched, n)
			}
		}
		if len(matched) == 0 {
			if f, ok := r.planSelectsNothing(ref, sel, selText, ls); ok {
				out = append(out, f)
			}
			continue
		}
		if f, ok := r.planNoopExclusion(ref, ls, selText, matched); ok {
			out = append(out, f)
		}
	}
	return out
}

// planSelectsNothing grades a Plan that matches no node by what its
// required terms ask for (matchLabels, In, Exists), without its
// exclusions. Required terms no node meets: high when one names the master
// label no node carries (hetzner-k3s's server Plan), medium otherwise (an
// opt-in label nobody has applied yet leaves the Plan idle, which may be
// meant). A Plan emptied only by its exclusions is not reported: the k3s
// documentation's agent Plan (control-plane DoesNotExist) selects no node
// on a cluster of control-plane nodes only, and should.
func (r *selectorRun) planSelectsNothing(ref finding.ObjectRef, sel labels.Selector, selText string, ls metav1.LabelSelector) (finding.Finding, bool) {
	reqs, _ := sel.Requirements()
	required := labels.NewSelector()
	namesMaster := false
	for _, q := range reqs {
		switch q.Operator() {
		case selop.In, selop.Equals, selop.DoubleEquals, selop.Exists:
			required = required.Add(q)
			namesMaster = namesMaster || q.Key() == labelMaster
		}
	}
	for j := range r.ctx.Snapshot.Nodes {
		if required.Matches(labels.Set(r.ctx.Snapshot.Nodes[j].Labels)) {
			return finding.Finding{}, false // its exclusions leave it empty
		}
	}
	nodes := check.Plural(len(r.ctx.Snapshot.Nodes), "node", "nodes")
	f := finding.Finding{
		Check: "selector-matches-no-node", Rule: rulePlanSelector, Severity: finding.Medium,
		Title: fmt.Sprintf("Plan %s/%s selects no node, so it upgrades nothing", ref.Namespace, ref.Name),
		Message: fmt.Sprintf("The system-upgrade-controller runs Plan %s/%s's upgrade on the nodes its spec.nodeSelector "+
			"picks, and none of the %s in the input has the labels it requires: until a node is labelled to match, the Plan "+
			"upgrades nothing. If the label is an opt-in you apply before upgrading, this is expected.", ref.Namespace, ref.Name, nodes),
		Objects:     []finding.ObjectRef{ref},
		Evidence:    append([]string{"spec.nodeSelector " + selText}, r.planKeyEvidence(ls)...),
		Remediation: "Select the nodes by a label they carry (for control-plane nodes: " + labelCtrlPlane + "), then check the nodes' kubeletVersion after the Plan completes.",
		Cases:       []string{caseHetzner},
	}
	if namesMaster && r.master == 0 {
		f.Severity = finding.High
		f.Message = fmt.Sprintf("The system-upgrade-controller runs Plan %s/%s's upgrade on the nodes its spec.nodeSelector "+
			"picks, and it requires %s, which none of the %s in the input carries: the Plan can report itself complete "+
			"while no node was upgraded, as hetzner-k3s's server Plan did when it selected the master label k3s no longer "+
			"applies.", ref.Namespace, ref.Name, labelMaster, nodes)
	}
	f.AddEvidence(finding.Quote(ref, finding.Value("spec.nodeSelector", selText)))
	return f, true
}

// planNoopExclusion reports a Plan that excludes nodes by the old master
// label when no node carries it and nodes carry the control-plane label:
// the control-plane nodes it meant to leave out are among those it picks.
func (r *selectorRun) planNoopExclusion(ref finding.ObjectRef, ls metav1.LabelSelector, selText string, matched []*corev1.Node) (finding.Finding, bool) {
	if r.master > 0 || r.ctrl == 0 {
		return finding.Finding{}, false
	}
	excludes := false
	for _, e := range ls.MatchExpressions {
		excludes = excludes || e.Key == labelMaster && (e.Operator == metav1.LabelSelectorOpNotIn || e.Operator == metav1.LabelSelectorOpDoesNotExist)
	}
	var cps []string
	for _, n := range matched {
		if _, ok := n.Labels[labelCtrlPlane]; ok {
			cps = append(cps, n.Name)
		}
	}
	if !excludes || len(cps) == 0 {
		return finding.Finding{}, false
	}
	f := finding.Finding{
		Check: "selector-matches-no-node", Rule: rulePlanSelector, Severity: finding.Medium,
		Title: fmt.Sprintf("Plan %s/%s excludes nodes by %s, which no node carries, so it picks the control plane too", ref.Namespace, ref.Name, labelMaster),
		Message: fmt.Sprintf("Plan %s/%s leaves out nodes labelled %s, but no node carries that label and %s %s %s: the "+
			"Plan picks them too. hetzner-k3s's agent Plan built this way chose the control-plane node first, its upgrade pod "+
			"could not tolerate that node's taint, and with concurrency 1 no worker was upgraded.", ref.Namespace, ref.Name,
			labelMaster, check.Plural(r.ctrl, "node", "nodes"), carryVerb(r.ctrl), labelCtrlPlane),
		Objects:     []finding.ObjectRef{ref},
		Evidence:    []string{"spec.nodeSelector " + selText, "control-plane nodes it picks: " + check.ListText(cps, removedListedNodes)},
		Remediation: "Exclude by the label the nodes carry now (" + labelCtrlPlane + " DoesNotExist).",
		Cases:       []string{caseHetzner},
	}
	for _, n := range cps {
		if len(f.Objects) > check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, check.NodeRef(n))
	}
	f.AddEvidence(finding.Quote(ref, finding.Value("spec.nodeSelector", selText)))
	return f, true
}

// planKeyEvidence says, per key a Plan's selector names, how many nodes
// carry it.
func (r *selectorRun) planKeyEvidence(ls metav1.LabelSelector) []string {
	var keys []string
	for k := range ls.MatchLabels {
		keys = append(keys, k)
	}
	for _, e := range ls.MatchExpressions {
		keys = append(keys, e.Key)
	}
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, fmt.Sprintf("%s of %d carry %s", check.Plural(len(r.ix.byKey[k]), "node", "nodes"), len(r.ix.nodes), k))
	}
	return []string{strings.Join(out, "; ")}
}
