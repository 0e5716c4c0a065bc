package scheduling

// The taint-not-tolerated rule of selector-matches-no-node: templates whose
// matching nodes all repel them.

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

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
