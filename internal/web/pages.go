package web

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// relatedCases is how many related cases a case page lists.
const relatedCases = 5

type caseView struct {
	Case    present.Case
	Related []library.Case
}

func casePage(lib *library.Library, all []check.Check, c *library.Case) *caseView {
	tax := lib.Taxonomy()
	return &caseView{Case: present.NewCase(c, &tax, all), Related: present.Related(lib, c, relatedCases)}
}

// unknownCase answers a case ID that is not in the library, naming close
// IDs since they are long and easy to half-remember.
func unknownCase(lib *library.Library, l links, id string) *badRequest {
	e := &badRequest{status: 404, msg: fmt.Sprintf("There is no case %q in the library.", id)}
	for _, c := range lib.Cases() {
		if id != "" && (strings.Contains(c.ID, id) || strings.Contains(id, c.ID)) && len(e.links) < 3 {
			e.links = append(e.links, textLink{Text: c.Title, Href: l.Case(c.ID)})
		}
	}
	e.links = append(e.links, textLink{Text: "All cases", Href: l.Cases("")})
	return e
}

type checksView struct{ Checks []check.Info }

type checkView struct {
	Check   check.Info
	Command string
}

func checksPage(lib *library.Library, all []check.Check) *checksView {
	v := &checksView{}
	for _, c := range all {
		v.Checks = append(v.Checks, check.Describe(c, present.CaseTitle(lib)))
	}
	return v
}

func checkPage(lib *library.Library, c check.Check) *checkView {
	return &checkView{Check: check.Describe(c, present.CaseTitle(lib)), Command: present.AuditCommand([]string{c.ID})}
}

// maxObjectsShown caps the objects listed per finding: a finding about
// thousands of pods stays readable and the page stays fast. The JSON
// report carries them all.
const maxObjectsShown = 50

// reportFilter is the report page's selection.
type reportFilter struct {
	severity  string
	check     string
	namespace string
}

type reportView struct {
	Name       string
	ReportID   string
	SourceLine string
	// RunLine names the kubegap that wrote the report, when, and the
	// config file's effects (report.HeaderLine); empty for an old report.
	RunLine    string
	StatusLine string
	ChecksLine string
	Gaps       present.Gaps
	// Cov is what could not be looked at, in proportion; the panel
	// showing it follows the findings.
	Cov              report.CoverageSummary
	Severities       []sevCount
	Upload           bool
	UploadLimit      string
	SeverityOptions  []option
	CheckOptions     []option
	NamespaceOptions []option
	FindingStatus    string
	Groups           []findingGroup
	Checks           []report.CheckResult
	Coverage         []snapshot.Coverage
	// CitedCases are written into a single-file report, whose case links
	// are anchors.
	CitedCases []library.Case
	// Target, Current and Plan are the upgrade preflight's: the
	// --target-version, the control plane's version and the plan.
	Target  string
	Current *report.CurrentVersion
	Plan    []planStep
}

// planStep is a step of the upgrade plan with its objects in one line.
type planStep struct {
	report.PlanStep
	ObjectsText string
}

func planSteps(rep *report.Report) []planStep {
	var out []planStep
	for _, st := range report.Plan(rep) {
		out = append(out, planStep{st, report.PlanObjects(st.Objects, 4)})
	}
	return out
}

type sevCount struct {
	Name  string
	Count int
}

type findingGroup struct {
	Name     string
	Shown    int
	Findings []findingView
}

type findingView struct {
	present.Finding
	Severity    string
	NSAttr      string
	ShownNames  []string
	MoreObjects int
	Hidden      bool
}

// reportPage builds the report view. Findings outside the filter are
// left out on the server (filter is applied there) and hidden in a static
// page (the browser filters).
func reportPage(rep *report.Report, lib *library.Library, f reportFilter, keepAll bool) *reportView {
	v := &reportView{SourceLine: sourceLine(rep.Source), RunLine: report.HeaderLine(rep), Gaps: present.ReportGaps(rep), Cov: report.Coverage(rep), Checks: rep.Checks, Coverage: rep.Coverage,
		Target: rep.TargetVersion, Current: rep.CurrentVersion, Plan: planSteps(rep)}
	counts := map[report.Status]int{}
	for _, c := range rep.Checks {
		counts[c.Status]++
	}
	v.ChecksLine = fmt.Sprintf("%d", len(rep.Checks))
	v.StatusLine = fmt.Sprintf("Checks: %d failed, %d passed, %d partial, %d not evaluated.", counts[report.Fail], counts[report.Pass], counts[report.Partial], counts[report.NotEvaluated])
	for _, sev := range finding.Severities() {
		v.Severities = append(v.Severities, sevCount{sev.String(), rep.Summary.Count(sev)})
		v.SeverityOptions = append(v.SeverityOptions, option{Value: sev.String(), Label: sev.String(), Selected: f.severity == sev.String()})
	}
	checkSet, nsSet := map[string]bool{}, map[string]bool{}
	title := present.CaseTitle(lib)
	groups := map[string]*findingGroup{}
	for _, sev := range finding.Severities() {
		groups[sev.String()] = &findingGroup{Name: sev.String()}
	}
	shown, cited := 0, map[string]bool{}
	for i := range rep.Findings {
		pf := present.NewFinding(&rep.Findings[i], title)
		checkSet[pf.Check] = true
		for _, ns := range pf.Namespaces {
			nsSet[ns] = true
		}
		match := (f.severity == "" || f.severity == pf.Finding.Severity.String()) &&
			(f.check == "" || f.check == pf.Check) &&
			(f.namespace == "" || contains(pf.Namespaces, f.namespace))
		if !match && !keepAll {
			continue
		}
		fv := findingView{Finding: pf, Severity: pf.Finding.Severity.String(), NSAttr: strings.Join(pf.Namespaces, " "), Hidden: !match}
		fv.ShownNames = pf.Names[:min(len(pf.Names), maxObjectsShown)]
		fv.MoreObjects = len(pf.Names) - len(fv.ShownNames)
		g := groups[fv.Severity]
		g.Findings = append(g.Findings, fv)
		if match {
			g.Shown++
			shown++
		}
		for _, id := range pf.Cases {
			cited[id] = true
		}
	}
	for _, sev := range finding.Severities() {
		if g := groups[sev.String()]; len(g.Findings) > 0 {
			v.Groups = append(v.Groups, *g)
		}
	}
	v.CheckOptions = options(checkSet, f.check)
	v.NamespaceOptions = options(nsSet, f.namespace)
	v.FindingStatus = findingStatus(shown, len(rep.Findings))
	if lib != nil {
		for _, id := range slices.Sorted(maps.Keys(cited)) {
			if c, ok := lib.Case(id); ok {
				v.CitedCases = append(v.CitedCases, c)
			}
		}
	}
	return v
}

func findingStatus(shown, total int) string {
	if shown == total {
		return fmt.Sprintf("%d findings", total)
	}
	return fmt.Sprintf("%d of %d findings", shown, total)
}

func options(set map[string]bool, selected string) []option {
	var out []option
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, option{Value: k, Label: k, Selected: k == selected})
	}
	return out
}

// sourceLine says what was audited, as the text report's header does.
func sourceLine(s snapshot.Source) string {
	src := "Audit of " + string(s.Type)
	switch {
	case s.Context != "":
		src += " " + s.Context
	case len(s.Paths) > 0:
		src += " " + strings.Join(s.Paths, ", ")
	}
	if s.ServerVersion != "" {
		src += " (server " + s.ServerVersion + ")"
	}
	return src + " · " + s.Scope.String()
}
