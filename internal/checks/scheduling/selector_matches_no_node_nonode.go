package scheduling

// The no-matching-node and legacy-master-selector rules of
// selector-matches-no-node: the finding for a template no node matches.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

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
