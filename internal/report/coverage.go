package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// CoverageSummary is what a report could not answer, in proportion: one
// line per resource the checks needed and did not get whole, one sentence
// for a namespace scope, the checks that wait on an opt-in source or on
// knowledge kubegap lacks, and one command that completes the rest. The
// text, Markdown and HTML reports print it after the findings; the
// per-rule detail stays in the JSON (Checks[].Rules, MissingInputs) and
// behind --explain-coverage.
type CoverageSummary struct {
	// Resources are the resources short for a reason other than the
	// namespace scope, the most needed first.
	Resources []CoverageLine
	// Scope is the sentence about a namespace scope; empty for a read of
	// every namespace.
	Scope string
	// ScopeChecks counts the checks left incomplete by the scope alone.
	ScopeChecks int
	// NotRequested lists the checks whose open rules all wait on an opt-in
	// source (--inspect-images), UnknownToKubegap those that wait on
	// knowledge kubegap does not hold; neither counts for
	// --fail-on-unknown unless =all.
	NotRequested     []string
	UnknownToKubegap []string
	// Other lists the checks left incomplete for another reason (objects
	// they could not judge, a check that failed), with no resource to add.
	Other []string
	// Fixes are the commands or RBAC rule that complete the resources,
	// one per way of falling short (usually one).
	Fixes []Fix
}

// Fix is one way to complete the audit: a command (or an RBAC rule) and
// a note on what it does.
type Fix struct {
	Command string
	Note    string
}

// String is the fix as one sentence: "COMMAND (NOTE)".
func (f Fix) String() string {
	if f.Note == "" {
		return f.Command
	}
	return f.Command + " (" + f.Note + ")"
}

// CoverageLine is one resource the checks needed and did not get whole.
type CoverageLine struct {
	// Name is the resource as kubectl names it ("deployments.apps").
	Name string
	// Resource is its coverage name ("apps/v1/deployments").
	Resource string
	// State says how it fell short: "not in the input", "forbidden", …
	State string
	// Checks counts the checks it left incomplete.
	Checks int
}

// Empty reports whether the report answered everything.
func (s CoverageSummary) Empty() bool {
	return len(s.Resources) == 0 && s.Scope == "" && len(s.NotRequested) == 0 &&
		len(s.UnknownToKubegap) == 0 && len(s.Other) == 0
}

// Text is the line a renderer prints: "events: not in the input — 9
// checks incomplete".
func (l CoverageLine) Text() string {
	return fmt.Sprintf("%s: %s — %s incomplete", l.Name, l.State, Plural(l.Checks, "check", "checks"))
}

// CoverageFold is several resources that each leave one check
// incomplete for the same reason, printed as one line.
type CoverageFold struct {
	State string
	Names []string
}

// Text is the folded line: "12 more resources not in the input, 1 check
// incomplete each: a, b, …".
func (f CoverageFold) Text() string {
	return fmt.Sprintf("%d more resources %s, 1 check incomplete each: %s", len(f.Names), f.State, strings.Join(f.Names, ", "))
}

// Folded is Resources as the terminal and Markdown reports print them:
// a resource that leaves two or more checks incomplete keeps its own line,
// and, in a list longer than foldAbove, those that leave one each are
// folded into one line per state when there are at least three of them.
// Each check that reads one more resource
// would otherwise add a line to every first run's report, before the
// command that completes them all; the per-resource detail stays in
// Resources (JSON, the web page, --explain-coverage).
func (s CoverageSummary) Folded() ([]CoverageLine, []CoverageFold) {
	const foldAbove = 10
	single := map[string][]string{}
	for _, l := range s.Resources {
		if l.Checks == 1 {
			single[l.State] = append(single[l.State], l.Name)
		}
	}
	var lines []CoverageLine
	var folds []CoverageFold
	folded := map[string]bool{}
	for _, l := range s.Resources {
		if len(s.Resources) > foldAbove && l.Checks == 1 && len(single[l.State]) >= 3 {
			if !folded[l.State] {
				folded[l.State] = true
				folds = append(folds, CoverageFold{State: l.State, Names: single[l.State]})
			}
			continue
		}
		lines = append(lines, l)
	}
	return lines, folds
}

// Coverage sums up what r could not answer (see CoverageSummary).
func Coverage(r *Report) CoverageSummary {
	var s CoverageSummary
	byRes := map[string]snapshot.Coverage{}
	for _, c := range r.Coverage {
		byRes[c.Resource] = c
	}
	checksOf := map[string]map[string]bool{} // resource -> checks
	scopeChecks := map[string]bool{}
	ways := map[string]bool{}
	for _, c := range r.Checks {
		var cats []string
		openRules := 0
		for _, rr := range c.Rules {
			if rr.Status == RuleEvaluated {
				continue
			}
			openRules++
			cats = append(cats, rr.Category)
			for _, m := range rr.Missing {
				if cov, ok := byRes[m]; ok && scopedOnly(r.Source, cov) {
					scopeChecks[c.ID] = true
					continue
				}
				if checksOf[m] == nil {
					checksOf[m] = map[string]bool{}
				}
				checksOf[m][c.ID] = true
			}
		}
		if openRules == 0 && (c.Status == Partial || c.Status == NotEvaluated) {
			cats = append(cats, "")
		}
		if len(cats) == 0 || anyMissing(c) {
			continue
		}
		switch onlyCategory(cats) {
		case CategoryOptIn:
			s.NotRequested = append(s.NotRequested, c.ID)
		case CategoryKnowledge:
			s.UnknownToKubegap = append(s.UnknownToKubegap, c.ID)
		default:
			s.Other = append(s.Other, c.ID)
		}
	}
	for _, cov := range r.Coverage {
		who := checksOf[cov.Resource]
		if len(who) == 0 {
			continue
		}
		name := cov.Resource
		if res, ok := snapshot.Parse(cov.Resource); ok {
			name = snapshot.RecipeName(res)
		}
		s.Resources = append(s.Resources, CoverageLine{Name: name, Resource: cov.Resource, State: stateOf(cov), Checks: len(who)})
		ways[wayOf(r.Source, cov)] = true
	}
	// kubectl takes the plural alone where it names one resource; the
	// group is kept where two share it (events, events.events.k8s.io).
	plurals := map[string]int{}
	for _, res := range snapshot.Known() {
		plurals[res.Resource]++
	}
	for i, l := range s.Resources {
		if res, ok := snapshot.Parse(l.Resource); ok && plurals[res.Resource] == 1 {
			s.Resources[i].Name = res.Resource
		}
	}
	slices.SortStableFunc(s.Resources, func(a, b CoverageLine) int { return cmp.Compare(b.Checks, a.Checks) })
	if !r.Source.Scope.AllNamespaces() {
		s.ScopeChecks = len(scopeChecks)
		s.Scope = fmt.Sprintf("The audit was limited to %s: objects in other namespaces were left out.", r.Source.Scope)
		if n := len(scopeChecks); n > 0 {
			s.Scope = fmt.Sprintf("The audit was limited to %s: objects in other namespaces were not read, so %s that need them %s partial, "+
				"never a pass; audit without -n/--namespace to complete them.", r.Source.Scope, Plural(n, "check", "checks"), isAre(n))
		}
	}
	s.Fixes = fixes(r, ways)
	return s
}

// scopedOnly: the resource was read whole, but only in some namespaces;
// or, from a cluster or the demo, it is missing only because the
// namespace scope left it out (a count that cannot be split by
// namespace).
func scopedOnly(src snapshot.Source, cov snapshot.Coverage) bool {
	if cov.Complete && len(cov.Namespaces) > 0 {
		return true
	}
	return !src.Scope.AllNamespaces() && cov.Status == snapshot.StatusNotInInput &&
		(src.Type == snapshot.SourceCluster || src.Type == snapshot.SourceDemo)
}

func anyMissing(c CheckResult) bool {
	for _, rr := range c.Rules {
		if rr.Status != RuleEvaluated && len(rr.Missing) > 0 {
			return true
		}
	}
	return false
}

// onlyCategory is the category all of cats share, or "" (input).
func onlyCategory(cats []string) string {
	for _, c := range cats[1:] {
		if c != cats[0] {
			return ""
		}
	}
	return cats[0]
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func stateOf(cov snapshot.Coverage) string {
	switch cov.Status {
	case snapshot.StatusRead:
		if cov.Complete {
			return "read in " + snapshot.Scope{Namespaces: cov.Namespaces}.String() + " only"
		}
		return "in the input, maybe not all"
	case snapshot.StatusNotInInput:
		return "not in the input"
	case snapshot.StatusForbidden:
		return "forbidden"
	case snapshot.StatusError:
		return "read failed"
	case snapshot.StatusNotRead:
		return "not read"
	}
	return string(cov.Status)
}

// Ways a resource falls short, each with its one fix.
const (
	wayDump   = "dump"
	wayRBAC   = "rbac"
	wayError  = "error"
	wayReread = "reread"
	// wayMetrics: offline input without the API server's /metrics.
	wayMetrics = "metrics"
)

func wayOf(src snapshot.Source, cov snapshot.Coverage) string {
	switch cov.Status {
	case snapshot.StatusForbidden:
		return wayRBAC
	case snapshot.StatusError:
		return wayError
	}
	switch src.Type {
	case snapshot.SourceFiles, snapshot.SourceSnapshot:
		if res, ok := snapshot.Parse(cov.Resource); ok && res.NonResourceURL != "" {
			return wayMetrics
		}
		return wayDump
	}
	return wayReread
}

// fixes is one command (or RBAC rule) per way the resources fell short.
func fixes(r *Report, ways map[string]bool) []Fix {
	var out []Fix
	if ways[wayDump] {
		out = append(out, Fix{"kubegap recipe > recipe.sh && sh recipe.sh && kubegap audit --from kubegap-dump",
			"kubectl dumps each resource whole, so that what is absent from the dump is absent from the cluster"})
	}
	if ways[wayRBAC] {
		if fix, ok := rbacRule(r); ok {
			out = append(out, fix)
		}
		for _, cov := range r.Coverage {
			if res, ok := snapshot.Parse(cov.Resource); ok && res.NonResourceURL != "" && cov.Status == snapshot.StatusForbidden {
				out = append(out, Fix{rbacgen.Rule(res), "a ClusterRole rule for the audit's identity, or kubectl get --raw " +
					res.NonResourceURL + " > " + snapshot.RecipeMetrics + " as a user who may, then kubegap audit --from " + snapshot.RecipeMetrics})
			}
		}
	}
	if ways[wayMetrics] && !ways[wayDump] {
		// The recipe dumps /metrics too; alone (a recipe dump made before
		// it did), the one command that adds it.
		out = append(out, Fix{"kubectl get --raw /metrics > " + snapshot.RecipeMetrics,
			"the API server's count of deprecated API requests; give the file to --from beside the rest (kubegap recipe dumps it too)"})
	}
	if ways[wayError] {
		out = append(out, Fix{Note: "run the audit again: the API server failed while listing some resources"})
	}
	if ways[wayReread] {
		out = append(out, Fix{Note: "audit the cluster live, which reads every resource its checks need"})
	}
	return out
}

// rbacRule is one ClusterRole rule that grants every forbidden read of a
// resource; ok is false when only non-resource URLs were forbidden.
func rbacRule(r *Report) (Fix, bool) {
	var groups, resources []string
	for _, cov := range r.Coverage {
		if cov.Status != snapshot.StatusForbidden {
			continue
		}
		res, ok := snapshot.Parse(cov.Resource)
		if !ok || res.NonResourceURL != "" {
			continue
		}
		g := fmt.Sprintf("%q", res.Group)
		if !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
		if r := fmt.Sprintf("%q", res.Resource); !slices.Contains(resources, r) {
			resources = append(resources, r)
		}
	}
	if len(resources) == 0 {
		return Fix{}, false
	}
	return Fix{fmt.Sprintf("{apiGroups: [%s], resources: [%s], verbs: [get, list, watch]}", strings.Join(groups, ", "), strings.Join(resources, ", ")),
		"a ClusterRole rule for the audit's identity; " + rbacHint}, true
}
