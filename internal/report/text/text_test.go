package text

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func sample() *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceCluster, Context: "prod", ServerVersion: "v1.35.4"},
		[]snapshot.Coverage{{Resource: "v1/nodes", Status: snapshot.StatusRead, Count: 3},
			{Resource: "v1/pods", Status: snapshot.StatusForbidden}})
	var nodes []finding.ObjectRef
	for i := range 30 {
		nodes = append(nodes, finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: fmt.Sprintf("n%02d", i)})
	}
	r.Findings = []finding.Finding{
		{Check: "b-check", Severity: finding.Low, Title: "low one", Objects: nodes[:1], Cases: []string{"case-b"}},
		{Check: "a-check", Severity: finding.High, Title: "high one", Message: strings.Repeat("word ", 60),
			Objects: nodes, Evidence: []string{"e1", "e2"}, Remediation: "fix it", Cases: []string{"case-a", "case-b"}},
		{Check: "a-check", Severity: finding.Critical, Title: "critical one", Objects: nodes[:2], Cases: []string{"case-a"}},
	}
	r.Checks = []report.CheckResult{{ID: "a-check", Status: report.Fail, Findings: 2}, {ID: "b-check", Status: report.Fail, Findings: 1},
		{ID: "c-check", Status: report.NotEvaluated, Reason: "v1/pods forbidden",
			Rules: []report.RuleResult{{ID: "c-check", Status: report.RuleSkipped, Reason: "v1/pods forbidden", Missing: []string{"v1/pods"}}}}}
	r.Finish()
	return r
}

func TestWrite(t *testing.T) {
	var b bytes.Buffer
	titles := map[string]string{"case-a": "Case A"}
	if err := Write(&b, sample(), Options{CaseTitle: func(id string) string { return titles[id] }, Width: 60}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	crit, high, low := strings.Index(out, "CRITICAL (1)"), strings.Index(out, "HIGH (1)"), strings.Index(out, "LOW (1)")
	if crit < 0 || high < crit || low < high {
		t.Errorf("severity groups missing or out of order:\n%s", out)
	}
	for _, want := range []string{
		"kubegap audit of cluster prod (server v1.35.4)",
		"kubegap audit of cluster prod (server v1.35.4),",
		"3 checks: 2 failed, 0 passed, 1 not evaluated",
		"and 10 more (-o json lists all)",
		"case-a — Case A",
		"COVERAGE (unknown, never a pass)",
		"  pods: forbidden — 1 check incomplete",
		`resources: ["pods"], verbs: [get, list, watch]}`,
		"3 findings: 1 critical, 1 high, 0 medium, 1 low, 0 info",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("text lacks %q", want)
		}
	}
	// Coverage follows the findings, in proportion; the per-rule detail
	// is behind ExplainCoverage.
	if low, cov := strings.Index(out, "LOW (1)"), strings.Index(out, "\nCOVERAGE ("); cov < low {
		t.Errorf("coverage before the findings:\n%s", out)
	}
	if strings.Contains(out, "COULD NOT LOOK") || strings.Contains(out, "rule skipped") {
		t.Errorf("per-rule detail without ExplainCoverage:\n%s", out)
	}
	b.Reset()
	if err := Write(&b, sample(), Options{Width: 60, ExplainCoverage: true}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"COULD NOT LOOK, RULE BY RULE (unknown, never a pass)",
		"  c-check: not-evaluated\n    rule skipped: v1/pods forbidden",
		"EACH INPUT AND ITS FIX\n  v1/pods (forbidden)",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("explained text lacks %q:\n%s", want, b.String())
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "    word") && len(line) > 60 {
			t.Errorf("message line not wrapped at 60: %q", line)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without Color")
	}
	b.Reset()
	Write(&b, sample(), Options{Color: true})
	if !strings.Contains(b.String(), "\x1b[") {
		t.Error("no colour with Color")
	}
}

func TestTextFitsTheWidthAndSaysSingulars(t *testing.T) {
	r := sample()
	r.Findings[0].Evidence = []string{strings.Repeat("spec.template.spec.containers[0].image=x ", 5)}
	r.Checks = r.Checks[:1]
	for _, width := range []int{60, 80, 120} {
		var b bytes.Buffer
		if err := Write(&b, r, Options{Width: width}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			// A URL is one word: cut, it would no longer open.
			if f := strings.Fields(line); len(f) == 1 && strings.HasPrefix(f[0], "https://") {
				continue
			}
			if n := len([]rune(line)); n > width {
				t.Errorf("width %d: line of %d: %q", width, n, line)
			}
		}
		if !strings.Contains(b.String(), "1 check: 1 failed") {
			t.Errorf("no singular:\n%s", b.String())
		}
		if i, j := strings.Index(b.String(), "3 findings:"), strings.Index(b.String(), "CRITICAL"); i < 0 || i > j {
			t.Error("counts do not come before the findings")
		}
	}
}

func TestWriteSummaryOneLinePerFinding(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	if err := WriteSummary(&b, r, Options{Width: 50}); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(b.String(), "\n") {
		if len([]rune(l)) > 50 {
			t.Errorf("line wider than 50: %q", l)
		}
		for _, sev := range []string{"CRITICAL", "HIGH", "LOW"} {
			if strings.HasPrefix(l, sev+" ") {
				lines = append(lines, l)
			}
		}
	}
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "CRITICAL "+r.Findings[0].ID+" a-check") ||
		!strings.HasPrefix(lines[1], "HIGH     "+r.Findings[1].ID+" a-check high one") {
		t.Errorf("summary lines:\n%s", strings.Join(lines, "\n"))
	}
	// Against a baseline: a NEW column, and the resolved and not
	// re-checked findings listed by title.
	r.Findings[1].Baseline = "new"
	r.Baseline = &report.Baseline{File: "prev.json", New: 1, Unchanged: 2,
		Resolved:     []finding.Finding{{Check: "a-check", Title: "gone one"}},
		NotRechecked: []report.NotRechecked{{Finding: finding.Finding{Check: "c-check", Title: "unseen one"}, Why: "rbac"}}}
	b.Reset()
	if err := WriteSummary(&b, r, Options{Width: 120}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CRITICAL     " + r.Findings[0].ID + " a-check critical one",
		"HIGH     NEW " + r.Findings[1].ID + " a-check high one",
		"RESOLVED SINCE prev.json (1)\n  [a-check] gone one",
		"[c-check] unseen one (rbac)",
		"1 resolved since prev.json, 1 not re-checked",
	} {
		if !strings.Contains(b.String(), want) && !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
}

func TestTextListsPartialChecksAsUnknown(t *testing.T) {
	r := sample()
	r.Checks = append(r.Checks, report.CheckResult{ID: "d-check", Status: report.Partial, Reason: "only namespace web was read"})
	var b bytes.Buffer
	Write(&b, r, Options{})
	if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), "incomplete for other reasons (--explain-coverage says why): d-check") ||
		!strings.Contains(b.String(), "1 partial") {
		t.Errorf("partial check not shown as unknown:\n%s", b.String())
	}
	b.Reset()
	Write(&b, r, Options{ExplainCoverage: true})
	if !strings.Contains(b.String(), "d-check: partial\n      only namespace web was read") {
		t.Errorf("partial check's reason not explained:\n%s", b.String())
	}
}

// TestFindingShowsItsID: each finding's heading carries the ID a baseline
// or a suppression keys on, dimmed on a terminal.
func TestFindingShowsItsID(t *testing.T) {
	r := sample()
	var b bytes.Buffer
	if err := Write(&b, r, Options{Width: 200}); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if !strings.Contains(b.String(), "["+f.Check+"] "+f.Title+" "+f.ID+"\n") {
			t.Errorf("no heading with ID %s:\n%s", f.ID, b.String())
		}
	}
	b.Reset()
	Write(&b, r, Options{Width: 200, Color: true})
	if !strings.Contains(b.String(), ansiDim+r.Findings[0].ID+ansiReset) {
		t.Error("the ID is not dimmed with colour")
	}
}
