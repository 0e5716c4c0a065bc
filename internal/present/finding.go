package present

import (
	"sort"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Finding is an audit finding ready to display.
type Finding struct {
	finding.Finding
	// Names are the objects as Kind/namespace/name (Kind/name when
	// cluster-scoped), in the finding's order.
	Names []string
	// Namespaces are the distinct namespaces of the objects, sorted.
	Namespaces []string
	// CaseRefs are the cited cases with their titles.
	CaseRefs []check.CaseRef
}

// NewFinding presents f. caseTitle looks up case titles (nil: IDs only).
func NewFinding(f *finding.Finding, caseTitle func(string) string) Finding {
	p := Finding{Finding: *f, Names: ObjectNames(f.Objects, 0), CaseRefs: make([]check.CaseRef, 0, len(f.Cases))}
	seen := map[string]bool{}
	for _, o := range f.Objects {
		if o.Namespace != "" && !seen[o.Namespace] {
			seen[o.Namespace] = true
			p.Namespaces = append(p.Namespaces, o.Namespace)
		}
	}
	sort.Strings(p.Namespaces)
	for _, id := range f.Cases {
		ref := check.CaseRef{ID: id, Relation: f.RelationTo(id)}
		if caseTitle != nil {
			ref.Title = caseTitle(id)
		}
		p.CaseRefs = append(p.CaseRefs, ref)
	}
	return p
}

// ObjectNames names objects as Kind/namespace/name; n > 0 keeps the first n.
func ObjectNames(objs []finding.ObjectRef, n int) []string {
	if n <= 0 || n > len(objs) {
		n = len(objs)
	}
	out := make([]string, 0, n)
	for _, o := range objs[:n] {
		out = append(out, o.String())
	}
	return out
}

// Gaps is what a report could not answer: the reason a reader must not
// take silence for a pass. It is empty when every check ran on complete
// input over the whole cluster.
type Gaps struct {
	// Scope is where the read looked, e.g. "all namespaces".
	Scope string
	// Scoped is true when the read did not cover every namespace.
	Scoped bool
	// NotEvaluated and Partial are the checks with those statuses.
	NotEvaluated []report.CheckResult
	Partial      []report.CheckResult
	// Coverage lists resources not read in full: forbidden, not served,
	// errors, missing from the input, or read from files that may be
	// incomplete.
	Coverage []snapshot.Coverage
}

// Any reports whether anything was left unanswered.
func (g *Gaps) Any() bool {
	return g.Scoped || len(g.NotEvaluated) > 0 || len(g.Partial) > 0 || len(g.Coverage) > 0
}

// ReportGaps collects what r could not answer.
func ReportGaps(r *report.Report) Gaps {
	g := Gaps{Scope: r.Source.Scope.String(), Scoped: !r.Source.Scope.AllNamespaces()}
	for _, c := range r.Checks {
		switch c.Status {
		case report.NotEvaluated:
			g.NotEvaluated = append(g.NotEvaluated, c)
		case report.Partial:
			g.Partial = append(g.Partial, c)
		}
	}
	for _, c := range r.Coverage {
		switch c.Status {
		case snapshot.StatusRead:
			// Reports written before coverage carried completeness have
			// no way to say; only files mark a read as incomplete.
			if !c.Complete && r.Source.Type == snapshot.SourceFiles {
				g.Coverage = append(g.Coverage, c)
			}
		case snapshot.StatusNotRead:
		default:
			g.Coverage = append(g.Coverage, c)
		}
	}
	return g
}
