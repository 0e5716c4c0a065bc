// Package present turns library cases and audit findings into display form:
// labelled facet values, the checks that detect a case, the audit command
// and agent prompt that check a cluster for it, object names and cited case
// titles. The CLI's text, the MCP tools and the web pages all read these
// values, so a label or a command line is worded in one place.
package present

import (
	"sort"
	"strings"
	"sync"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
)

// Term is one facet value of a case, with its taxonomy name.
type Term struct {
	Facet string
	ID    string
	// Name is the taxonomy's name, or the ID when the taxonomy lacks it.
	Name string
}

// Label is "Name (id)", the form text output uses.
func (t Term) Label() string {
	if t.Name == "" || t.Name == t.ID {
		return t.ID
	}
	return t.Name + " (" + t.ID + ")"
}

// Explained is a facet value with the case's own explanation: the root
// cause, or one contributing factor.
type Explained struct {
	Term
	Text string
}

// FacetTerms is one facet's values on a case.
type FacetTerms struct {
	Facet string
	Title string
	Terms []Term
}

// CheckRef names a check that looks for a case's gap.
type CheckRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Case is a library case ready to display.
type Case struct {
	library.Case
	RootCauseTerm Explained
	Factors       []Explained
	// Facets lists the case's values of every facet, in FacetNames order.
	Facets []FacetTerms
	// Checks are the checks citing the case, sorted by ID.
	Checks []CheckRef
	// DetectableText is "Yes. <signal>" or "No. <why>".
	DetectableText string
	// AuditCommand is the exact command that checks a cluster for the
	// case; empty when no check covers it.
	AuditCommand string
	// AgentPrompt is a one-line request for Claude Code or Codex; empty
	// when no check covers the case.
	AgentPrompt string
	// NoCheck says why no check covers the case, when none does.
	NoCheck string
	// SourceViews are the sources with the sections each supports.
	SourceViews []Source
	// Inferences are the sections no source states outright.
	Inferences []Inference
}

// CheckLine points from a case to the audit that looks for it, or says
// plainly that nothing does yet.
func (c *Case) CheckLine() string {
	if c.AuditCommand != "" {
		return "Check your cluster for this: " + c.AuditCommand
	}
	return c.NoCheck
}

// NewCase presents c. all is the check registry (checks.All()).
func NewCase(c *library.Case, tax *library.Taxonomy, all []check.Check) Case {
	p := Case{Case: *c, SourceViews: Sources(c), Inferences: Inferences(c)}
	p.RootCauseTerm = Explained{Term: term(tax, library.FacetRootCause, c.RootCause.Category), Text: c.RootCause.Text}
	for _, f := range c.ContributingFactors {
		p.Factors = append(p.Factors, Explained{Term: term(tax, library.FacetFactor, f.Category), Text: f.Text})
	}
	for _, facet := range library.FacetNames() {
		ft := FacetTerms{Facet: facet, Title: FacetTitle(facet)}
		for _, id := range FacetIDs(c, facet) {
			ft.Terms = append(ft.Terms, term(tax, facet, id))
		}
		p.Facets = append(p.Facets, ft)
	}
	for _, ch := range ChecksCiting(all, c.ID) {
		p.Checks = append(p.Checks, CheckRef{ID: ch.ID, Title: ch.Title})
	}
	if c.Detectable.ReadOnly {
		p.DetectableText = "Yes. " + c.Detectable.Signal
		if ne := c.Detectable.NotEarlier; ne != nil {
			p.DetectableText += " Not before it happens: " + ne.Why + " (" + ne.Source + ")"
		}
	} else {
		p.DetectableText = "No. " + c.Detectable.Why
	}
	if len(p.Checks) > 0 {
		ids := make([]string, len(p.Checks))
		for i, ch := range p.Checks {
			ids[i] = ch.ID
		}
		p.AuditCommand = AuditCommand(ids)
		p.AgentPrompt = "Run `" + p.AuditCommand + "` against my current kube context (read-only) and explain each finding in the light of the incident case " + c.ID + "; propose fixes, do not apply them."
	} else {
		p.NoCheck = "No kubegap check covers this case yet."
		switch {
		case !c.Detectable.ReadOnly:
			p.NoCheck += " The gap cannot be seen read-only from the Kubernetes API."
		case c.Detectable.NoCheckYet != "":
			p.NoCheck += " " + c.Detectable.NoCheckYet
		}
	}
	return p
}

// AuditCommand is the command that runs the given checks. When one of
// them is a preflight check, which judges an upgrade and runs only with
// --target-version, the command carries PreflightTarget so that it runs as
// printed; the reader puts the minor they are upgrading to.
func AuditCommand(checkIDs []string) string {
	cmd := "kubegap audit --checks " + strings.Join(checkIDs, ",")
	preflight := preflightChecks()
	for _, id := range checkIDs {
		if preflight[id] {
			return cmd + " --target-version " + PreflightTarget
		}
	}
	return cmd
}

// preflightChecks holds the IDs of the registry's preflight checks, read
// once: checks.Lookup builds every check for each ID it looks up, and the
// /cases page asks for the command of all its cases' checks on every
// request (at 250 cases, most of the page's time and memory).
var preflightChecks = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, c := range checks.All() {
		if c.Preflight {
			out[c.ID] = true
		}
	}
	return out
})

// PreflightTarget is the --target-version suggested commands carry for
// preflight checks: the minor after the demo cluster's (v1.35.4), so that
// every suggested command runs against the demo as printed.
const PreflightTarget = "1.36"

func term(tax *library.Taxonomy, facet, id string) Term {
	t := Term{Facet: facet, ID: id, Name: id}
	if tax != nil {
		if tt, ok := tax.Term(facet, id); ok {
			t.Name = tt.Name
		}
	}
	return t
}

// TermLabel renders a facet value as "Name (id)", falling back to the ID
// alone if the taxonomy lacks it (a loaded library never does).
func TermLabel(tax *library.Taxonomy, facet, id string) string {
	return term(tax, facet, id).Label()
}

// FacetIDs returns the IDs a case carries for the named facet.
func FacetIDs(c *library.Case, facet string) []string {
	switch facet {
	case library.FacetRootCause:
		if c.RootCause.Category == "" {
			return nil
		}
		return []string{c.RootCause.Category}
	case library.FacetComponent:
		return c.Components
	case library.FacetSymptom:
		return c.SymptomCategories
	case library.FacetFactor:
		ids := make([]string, 0, len(c.ContributingFactors))
		for _, f := range c.ContributingFactors {
			ids = append(ids, f.Category)
		}
		return ids
	}
	return nil
}

// FacetTitle is a facet's plural heading: "Root causes", "Components".
func FacetTitle(facet string) string {
	switch facet {
	case library.FacetRootCause:
		return "Root causes"
	case library.FacetComponent:
		return "Components"
	case library.FacetSymptom:
		return "Symptoms"
	case library.FacetFactor:
		return "Contributing factors"
	}
	return facet
}

// FacetLabel is a facet's name in running text: "root cause", "factor".
func FacetLabel(facet string) string {
	switch facet {
	case library.FacetRootCause:
		return "root cause"
	case library.FacetComponent:
		return "component"
	case library.FacetSymptom:
		return "symptom"
	case library.FacetFactor:
		return "factor"
	}
	return facet
}

// ChecksCiting returns the checks whose Cases include id, sorted by ID.
func ChecksCiting(all []check.Check, id string) []check.Check {
	var out []check.Check
	for _, c := range all {
		for _, l := range c.Cases {
			if l.ID == id {
				out = append(out, c)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// CaseTitle returns a lookup of case titles in lib, for citations; a nil
// library (one that failed to load) yields empty titles, since the
// citation matters more than its title.
func CaseTitle(lib *library.Library) func(id string) string {
	return func(id string) string {
		if lib == nil {
			return ""
		}
		if c, ok := lib.Case(id); ok {
			return c.Title
		}
		return ""
	}
}

// CaseRefs names the cited cases with their titles.
func CaseRefs(lib *library.Library, ids []string) []check.CaseRef {
	title := CaseTitle(lib)
	refs := make([]check.CaseRef, 0, len(ids))
	for _, id := range ids {
		refs = append(refs, check.CaseRef{ID: id, Title: title(id)})
	}
	return refs
}

// Related returns up to n other cases that share the most facet values with
// c: a shared root cause weighs most, then components, then factors and
// symptoms. Ties keep the library's order (newest first).
func Related(lib *library.Library, c *library.Case, n int) []library.Case {
	weights := map[string]int{library.FacetRootCause: 3, library.FacetComponent: 2, library.FacetFactor: 1, library.FacetSymptom: 1}
	type scored struct {
		c     library.Case
		score int
	}
	var out []scored
	for _, o := range lib.Cases() {
		if o.ID == c.ID {
			continue
		}
		s := 0
		for facet, w := range weights {
			mine := FacetIDs(c, facet)
			for _, id := range FacetIDs(&o, facet) {
				for _, m := range mine {
					if m == id {
						s += w
					}
				}
			}
		}
		if s > 0 {
			out = append(out, scored{o, s})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	res := make([]library.Case, 0, n)
	for i := 0; i < len(out) && i < n; i++ {
		res = append(res, out[i].c)
	}
	return res
}
