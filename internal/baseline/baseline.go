// Package baseline compares an audit with a previous report (--baseline):
// each finding becomes new or unchanged, and the previous findings that are
// gone are listed as resolved. Findings are matched by their stable ID.
package baseline

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Finding states after a comparison.
const (
	New       = "new"
	Unchanged = "unchanged"
)

// Load reads a previous JSON report. Findings written without an ID (by a
// kubegap before IDs) get the one they would have had.
func Load(path string) ([]finding.Finding, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var prev struct {
		Kind       string            `json:"kind"`
		Findings   []finding.Finding `json:"findings"`
		Suppressed []struct {
			Finding finding.Finding `json:"finding"`
		} `json:"suppressed"`
	}
	if err := json.Unmarshal(b, &prev); err != nil {
		return nil, fmt.Errorf("%s: not a kubegap JSON report: %w", path, err)
	}
	if prev.Kind != report.Kind {
		return nil, fmt.Errorf("%s: not a kubegap JSON report (kind %q, want %s)", path, prev.Kind, report.Kind)
	}
	// A finding suppressed then is still known then: counting it new now
	// would fail --fail-on-new when its suppression expires.
	all := prev.Findings
	for _, s := range prev.Suppressed {
		all = append(all, s.Finding)
	}
	report.ForgetObjectPlaces(all)
	for i := range all {
		if all[i].ID == "" {
			all[i].ID = finding.StableID(all[i])
		}
	}
	return all, nil
}

// Compare marks rep's findings new or unchanged against prev and sorts
// the previous findings that are gone into resolved (their check looked at
// their objects again, with the rule that made them, and found nothing)
// and not re-checked (it did not: a namespace scope, missing input or
// permissions, a skipped check). Absence from a run that did not look is
// never a resolution.
//
// A finding of a scoped or partial run names only the objects that run
// saw, so its ID can differ from the same gap's in a full run. Where a new
// finding has the check and rule of a previous one, names a subset of its
// objects, and every object it lacks is one this run could not see, it is
// that finding: it takes the previous ID and is unchanged.
func Compare(rep *report.Report, file string, prev []finding.Finding) {
	before := map[string]bool{}
	for _, f := range prev {
		before[f.ID] = true
	}
	seen := newVisibility(rep)
	now := map[string]bool{}
	for _, f := range rep.Findings {
		now[f.ID] = true
	}
	for _, s := range rep.Suppressed {
		now[s.Finding.ID] = true
	}
	b := &report.Baseline{File: file, Resolved: []finding.Finding{}}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if !before[f.ID] {
			if id, ok := narrowerOf(*f, prev, now, seen); ok {
				f.ID = id
				now[id] = true
			}
		}
		if before[f.ID] {
			f.Baseline = Unchanged
			b.Unchanged++
		} else {
			f.Baseline = New
			b.New++
		}
	}
	done := map[string]bool{}
	for _, f := range prev {
		if now[f.ID] || done[f.ID] {
			continue
		}
		done[f.ID] = true
		f.Baseline = ""
		if why := seen.notRechecked(f); why != "" {
			b.NotRechecked = append(b.NotRechecked, report.NotRechecked{Finding: f, Why: why})
			continue
		}
		b.Resolved = append(b.Resolved, f)
	}
	rep.Baseline = b
}

// narrowerOf finds the previous finding f is a narrower view of (see
// Compare) and returns its ID.
func narrowerOf(f finding.Finding, prev []finding.Finding, taken map[string]bool, seen *visibility) (string, bool) {
	have := map[finding.ObjectRef]bool{}
	for _, o := range f.Objects {
		have[o] = true
	}
	for _, p := range prev {
		if p.Check != f.Check || taken[p.ID] || len(p.Objects) <= len(f.Objects) {
			continue
		}
		// Same check and rule (or title, digits aside): the ID p would
		// have over f's objects is f's own.
		q := p
		q.Objects = f.Objects
		if finding.StableID(q) != finding.StableID(f) {
			continue
		}
		inPrev := map[finding.ObjectRef]bool{}
		for _, o := range p.Objects {
			inPrev[o] = true
		}
		ok := true
		for _, o := range f.Objects {
			ok = ok && inPrev[o]
		}
		for _, o := range p.Objects {
			ok = ok && (have[o] || !seen.object(o))
		}
		if ok {
			return p.ID, true
		}
	}
	return "", false
}

// visibility answers what a run looked at: which objects it could see and
// which rules it evaluated over them.
type visibility struct {
	rep      *report.Report
	coverage map[string]snapshot.Coverage
	checks   map[string]report.CheckResult
}

func newVisibility(rep *report.Report) *visibility {
	v := &visibility{rep: rep, coverage: map[string]snapshot.Coverage{}, checks: map[string]report.CheckResult{}}
	for _, c := range rep.Coverage {
		v.coverage[c.Resource] = c
	}
	for _, c := range rep.Checks {
		v.checks[c.ID] = c
	}
	return v
}

// object reports whether the run saw every object of o's resource in o's
// namespace, so that o missing from it means o is gone.
func (v *visibility) object(o finding.ObjectRef) bool {
	group, _, _ := strings.Cut(o.APIVersion, "/")
	if !strings.Contains(o.APIVersion, "/") {
		group = ""
	}
	res, ok := snapshot.ByGroupKind(group, o.Kind)
	if !ok {
		return false
	}
	cov, ok := v.coverage[res.String()]
	if !ok || !cov.Complete {
		return false
	}
	if o.Namespace == "" || len(cov.Namespaces) == 0 {
		return o.Namespace == "" || v.rep.Source.Scope.AllNamespaces() || slices.Contains(v.rep.Source.Scope.Namespaces, o.Namespace)
	}
	return slices.Contains(cov.Namespaces, o.Namespace)
}

// notRechecked says why the run did not look again at a previous
// finding's objects with the rule that made it; "" when it did.
func (v *visibility) notRechecked(f finding.Finding) string {
	c, ok := v.checks[f.Check]
	if !ok {
		return "skipped"
	}
	if c.Status == report.NotEvaluated && len(c.Rules) == 0 {
		return "input"
	}
	rules := c.Rules
	for _, rr := range c.Rules {
		if f.Rule != "" && rr.ID == f.Rule {
			rules = []report.RuleResult{rr}
		}
	}
	for _, rr := range rules {
		if why := v.ruleGap(rr, f); why != "" {
			return why
		}
	}
	for _, o := range f.Objects {
		if !v.object(o) {
			return v.objectGap(o)
		}
	}
	return ""
}

// ruleGap says why rule rr did not evaluate f's objects; "" when it did.
// A rule left partial only by a namespace scope evaluated the objects of
// a finding that lies inside that scope.
func (v *visibility) ruleGap(rr report.RuleResult, f finding.Finding) string {
	switch {
	case rr.Status == report.RuleEvaluated:
		return ""
	case rr.Status == report.RuleSkipped || rr.Noted || len(rr.Missing) == 0:
		switch rr.Category {
		case report.CategoryOptIn:
			return "not requested"
		case report.CategoryKnowledge:
			return "unknown to kubegap"
		}
		return v.missingGap(rr.Missing)
	}
	var namespaces []string
	for _, o := range f.Objects {
		if o.Namespace != "" {
			namespaces = append(namespaces, o.Namespace)
		}
	}
	for _, m := range rr.Missing {
		cov := v.coverage[m]
		if !cov.Complete || len(cov.Namespaces) == 0 || len(namespaces) == 0 {
			return v.missingGap([]string{m})
		}
		for _, ns := range namespaces {
			if !slices.Contains(cov.Namespaces, ns) {
				return "scope"
			}
		}
	}
	return ""
}

// missingGap names how the first of the missing resources fell short.
func (v *visibility) missingGap(missing []string) string {
	for _, m := range missing {
		cov := v.coverage[m]
		switch {
		case cov.Status == snapshot.StatusForbidden:
			return "rbac"
		case cov.Complete && len(cov.Namespaces) > 0:
			return "scope"
		}
	}
	return "input"
}

func (v *visibility) objectGap(o finding.ObjectRef) string {
	if o.Namespace != "" && !v.rep.Source.Scope.AllNamespaces() && !slices.Contains(v.rep.Source.Scope.Namespaces, o.Namespace) {
		return "scope"
	}
	group, _, _ := strings.Cut(o.APIVersion, "/")
	if !strings.Contains(o.APIVersion, "/") {
		group = ""
	}
	if res, ok := snapshot.ByGroupKind(group, o.Kind); ok {
		return v.missingGap([]string{res.String()})
	}
	return "input"
}

// NewAtOrAbove reports whether a new finding is at or above sev
// (--fail-on-new).
func NewAtOrAbove(rep *report.Report, sev finding.Severity) bool {
	for _, f := range rep.Findings {
		if f.Baseline == New && f.Severity >= sev {
			return true
		}
	}
	return false
}
