package scheduling

// The no-op-exclusion rule of selector-matches-no-node: exclusions by a
// renamed label no node carries any more.

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
)

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
