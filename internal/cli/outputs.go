package cli

import (
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/junit"
	"github.com/kubegap/kubegap/internal/report/markdown"
	"github.com/kubegap/kubegap/internal/report/policyreport"
	"github.com/kubegap/kubegap/internal/report/sarif"
	"github.com/kubegap/kubegap/internal/report/text"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// renderContext is what a renderer may need besides the report.
type renderContext struct {
	app   *App
	color bool
	width int
	// explainCoverage is --explain-coverage.
	explainCoverage bool
	// whole: the report does not go to a terminal, so rows stay uncut.
	whole bool
	// subject names what a finding is about, for the text index
	// (findingSubjects); nil: its first object.
	subject func(finding.Finding) string
	// reportObjects is what -o policyreport and -o openreports map by:
	// --fail-on and the snapshot's UIDs.
	reportObjects policyreport.Options
	// took is how long the audit ran, for -o prometheus.
	took time.Duration
}

// output is one -o format of the audit report.
type output struct {
	render func(w io.Writer, rep *report.Report, rc renderContext) error
	// locations: the format points at source lines, so offline input is
	// parsed a second time for them (snapshot.Positions). Every format but
	// summary and HTML names file:line beside each object.
	locations bool
}

// outputs is the one table of audit report formats: a new format is one
// entry here and a renderer package.
var outputs = map[string]output{
	"text": {locations: true, render: func(w io.Writer, rep *report.Report, rc renderContext) error {
		return text.Write(w, rep, text.Options{Color: rc.color, CaseTitle: caseTitle, Width: rc.width, ExplainCoverage: rc.explainCoverage, Subject: rc.subject, Whole: rc.whole})
	}},
	"summary": {render: func(w io.Writer, rep *report.Report, rc renderContext) error {
		return text.WriteSummary(w, rep, text.Options{Color: rc.color, Width: rc.width, Whole: rc.whole})
	}},
	"json": {locations: true, render: func(w io.Writer, rep *report.Report, _ renderContext) error { return report.WriteJSON(w, rep) }},
	"yaml": {locations: true, render: func(w io.Writer, rep *report.Report, _ renderContext) error { return report.WriteYAML(w, rep) }},
	"sarif": {locations: true, render: func(w io.Writer, rep *report.Report, _ renderContext) error {
		return sarif.Write(w, rep, sarif.Options{Rules: sarifRules(), CaseTitle: caseTitle})
	}},
	"junit": {locations: true, render: func(w io.Writer, rep *report.Report, _ renderContext) error { return junit.Write(w, rep) }},
	"markdown": {locations: true, render: func(w io.Writer, rep *report.Report, rc renderContext) error {
		return markdown.WriteWith(w, rep, markdown.Options{ExplainCoverage: rc.explainCoverage})
	}},
	"html": {render: func(w io.Writer, rep *report.Report, _ renderContext) error { return writeHTMLReport(w, rep) }},
	"policyreport": {render: func(w io.Writer, rep *report.Report, rc renderContext) error {
		return policyreport.Write(w, rep, policyreport.PolicyReport, rc.reportObjects)
	}},
	"openreports": {render: func(w io.Writer, rep *report.Report, rc renderContext) error {
		return policyreport.Write(w, rep, policyreport.OpenReports, rc.reportObjects)
	}},
	"prometheus": {render: writePrometheus},
}

// outputNames lists the formats, for help, errors and completion.
func outputNames() []string {
	names := make([]string, 0, len(outputs))
	for n := range outputs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func outputList() string { return strings.Join(outputNames(), ", ") }

func sarifRules() []sarif.Rule {
	var out []sarif.Rule
	for _, c := range checks.All() {
		out = append(out, sarif.Rule{ID: c.ID, Title: c.Title, Description: c.Description, Severity: c.Severity, Cases: c.Cases})
	}
	return out
}

// reportObjectOptions are the -o policyreport and -o openreports options
// of an audit: results at or above --fail-on are fail, below it warn;
// objects carry the UID the snapshot holds for them.
func reportObjectOptions(failOn finding.Severity, never bool, snap *snapshot.Snapshot) policyreport.Options {
	return policyreport.Options{FailOn: failOn, NoFail: never, Area: checks.AreaOf,
		UID: func(o finding.ObjectRef) types.UID {
			if snap == nil {
				return ""
			}
			m, _ := snap.Meta(o.Kind, o.Namespace, o.Name)
			return m.UID
		}}
}
