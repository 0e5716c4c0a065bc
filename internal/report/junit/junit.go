// Package junit writes an audit report as JUnit XML, which CI systems
// (GitLab, Jenkins, Azure DevOps) show as test results: one test suite per
// check and one failing test case per finding. A check that passed is one
// passing case; a check that could not answer, or answered only in part,
// is a skipped case with the reason (unknown is never shown as a pass);
// a suppressed finding is a skipped case with its suppression reason.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

type testSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     string      `xml:"time,attr"`
	Suites   []testSuite `xml:"testsuite"`
}

type testSuite struct {
	Name      string     `xml:"name,attr"`
	Tests     int        `xml:"tests,attr"`
	Failures  int        `xml:"failures,attr"`
	Skipped   int        `xml:"skipped,attr"`
	Errors    int        `xml:"errors,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr,omitempty"`
	Cases     []testCase `xml:"testcase"`
}

type testCase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *message `xml:"failure,omitempty"`
	Skipped   *message `xml:"skipped,omitempty"`
}

type message struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Body    string `xml:",chardata"`
}

// Write writes rep as JUnit XML.
func Write(w io.Writer, rep *report.Report) error {
	byCheck := map[string][]finding.Finding{}
	for _, f := range rep.Findings {
		byCheck[f.Check] = append(byCheck[f.Check], f)
	}
	suppressed := map[string][]report.Suppressed{}
	for _, s := range rep.Suppressed {
		suppressed[s.Finding.Check] = append(suppressed[s.Finding.Check], s)
	}
	all := testSuites{Name: "kubegap audit", Time: "0"}
	stamp := ""
	if !rep.GeneratedAt.IsZero() {
		stamp = rep.GeneratedAt.UTC().Format("2006-01-02T15:04:05")
	}
	for _, c := range rep.Checks {
		s := testSuite{Name: c.ID, Time: "0", Timestamp: stamp}
		for _, f := range byCheck[c.ID] {
			s.Cases = append(s.Cases, testCase{Name: caseName(f), Classname: c.ID, Time: "0",
				Failure: &message{Message: f.Title, Type: f.Severity.String(), Body: body(f, rep.CaseURL)}})
			s.Failures++
		}
		for _, sup := range suppressed[c.ID] {
			s.Cases = append(s.Cases, testCase{Name: caseName(sup.Finding), Classname: c.ID, Time: "0",
				Skipped: &message{Message: fmt.Sprintf("suppressed by %s: %s", sup.By, sup.Reason), Body: body(sup.Finding, rep.CaseURL)}})
			s.Skipped++
		}
		switch {
		case c.Status == report.NotEvaluated || c.Status == report.Partial:
			s.Cases = append(s.Cases, testCase{Name: c.ID + " " + string(c.Status), Classname: c.ID, Time: "0",
				Skipped: &message{Message: string(c.Status) + ": " + c.Reason}})
			s.Skipped++
		case c.Status == report.Pass && s.Failures == 0:
			s.Cases = append(s.Cases, testCase{Name: c.ID + " found no gap", Classname: c.ID, Time: "0"})
		}
		s.Tests = len(s.Cases)
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Skipped += s.Skipped
		all.Suites = append(all.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// caseName is unique within a suite and stable across runs: the title
// names the gap, the ID tells apart two findings with the same title.
func caseName(f finding.Finding) string { return f.Title + " [" + f.ID + "]" }

func body(f finding.Finding, caseURL func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nseverity: %s\nid: %s\n", f.Message, f.Severity, f.ID)
	for _, o := range f.Objects {
		if at := report.Where(f, o); at != "" {
			fmt.Fprintf(&b, "object: %s (%s)\n", o, at)
			continue
		}
		fmt.Fprintf(&b, "object: %s\n", o)
	}
	for _, e := range f.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", e)
	}
	if f.Remediation != "" {
		fmt.Fprintf(&b, "fix: %s\n", f.Remediation)
	}
	for _, c := range f.Cases {
		fmt.Fprintf(&b, "case: %s\n", caseURL(c))
	}
	return b.String()
}
