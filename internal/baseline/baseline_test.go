package baseline

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// rep is a report whose check c evaluated every node, with a finding per
// title.
func rep(titles ...string) *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceDemo},
		[]snapshot.Coverage{{Resource: "v1/nodes", Status: snapshot.StatusRead, Complete: true}})
	r.Checks = []report.CheckResult{{ID: "c", Status: report.Fail, Rules: []report.RuleResult{{ID: "c", Status: report.RuleEvaluated}}}}
	for _, t := range titles {
		r.Findings = append(r.Findings, finding.Finding{Check: "c", Severity: finding.High, Title: t,
			Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: t}}})
	}
	r.Finish()
	return r
}

func pod(ns, name string) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}
}

// scoped is a run limited to namespace a: pods read whole there only, and
// check p's one rule partial for that reason alone.
func scoped(fs ...finding.Finding) *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceCluster, Scope: snapshot.Scope{Namespaces: []string{"a"}}},
		[]snapshot.Coverage{{Resource: "v1/pods", Status: snapshot.StatusRead, Complete: true, Namespaces: []string{"a"}}})
	r.Checks = []report.CheckResult{{ID: "p", Status: report.Fail, Rules: []report.RuleResult{
		{ID: "p", Status: report.RulePartial, Missing: []string{"v1/pods"}, Category: report.CategoryInput}}}}
	r.Findings = fs
	r.Finish()
	return r
}

func withID(f finding.Finding) finding.Finding {
	f.ID = finding.StableID(f)
	return f
}

// TestResolvedOnlyWhenLookedAgain: a previous finding gone from a run is
// resolved only when that run's check evaluated its rule over its
// objects; a skipped check, a namespace outside the scope, a rule the
// check could not judge leave it not re-checked.
func TestResolvedOnlyWhenLookedAgain(t *testing.T) {
	inA := withID(finding.Finding{Check: "p", Title: "pod a/x", Objects: []finding.ObjectRef{pod("a", "x")}})
	inB := withID(finding.Finding{Check: "p", Title: "pod b/y", Objects: []finding.ObjectRef{pod("b", "y")}})
	other := withID(finding.Finding{Check: "q", Title: "skipped check", Objects: []finding.ObjectRef{pod("a", "z")}})
	cur := scoped()
	Compare(cur, "prev.json", []finding.Finding{inA, inB, other})
	if len(cur.Baseline.Resolved) != 1 || cur.Baseline.Resolved[0].ID != inA.ID {
		t.Errorf("resolved %+v, want only the finding in namespace a", cur.Baseline.Resolved)
	}
	why := map[string]string{}
	for _, n := range cur.Baseline.NotRechecked {
		why[n.Finding.ID] = n.Why
	}
	if why[inB.ID] != "scope" || why[other.ID] != "skipped" || len(why) != 2 {
		t.Errorf("not re-checked %v, want %s scope and %s skipped", why, inB.ID, other.ID)
	}
	// The same rule, partial because the check could not judge some
	// objects (an opt-in source not requested): nothing resolves.
	cur = scoped()
	cur.Checks[0].Rules[0] = report.RuleResult{ID: "p", Status: report.RulePartial, Noted: true, Category: report.CategoryOptIn}
	Compare(cur, "prev.json", []finding.Finding{inA})
	if len(cur.Baseline.Resolved) != 0 || len(cur.Baseline.NotRechecked) != 1 || cur.Baseline.NotRechecked[0].Why != "not requested" {
		t.Errorf("noted rule: %+v", cur.Baseline)
	}
}

// TestScopedFindingKeepsItsID: a scoped run sees only part of a
// finding's objects; the finding keeps the ID of the full one and is
// unchanged, not new.
func TestScopedFindingKeepsItsID(t *testing.T) {
	full := withID(finding.Finding{Check: "p", Title: "pods share a gap on 3 nodes", Objects: []finding.ObjectRef{pod("a", "x"), pod("b", "y")}})
	cur := scoped(finding.Finding{Check: "p", Title: "pods share a gap on 2 nodes", Objects: []finding.ObjectRef{pod("a", "x")}})
	Compare(cur, "prev.json", []finding.Finding{full})
	if f := cur.Findings[0]; f.ID != full.ID || f.Baseline != Unchanged || cur.Baseline.New != 0 || len(cur.Baseline.Resolved) != 0 {
		t.Errorf("scoped view: ID %s (want %s), baseline %q, %+v", f.ID, full.ID, f.Baseline, cur.Baseline)
	}
	// Where the run could see the object that is gone, the findings differ.
	unscoped := rep()
	unscoped.Coverage = []snapshot.Coverage{{Resource: "v1/pods", Status: snapshot.StatusRead, Complete: true}}
	unscoped.Checks = []report.CheckResult{{ID: "p", Status: report.Fail, Rules: []report.RuleResult{{ID: "p", Status: report.RuleEvaluated}}}}
	unscoped.Findings = []finding.Finding{{Check: "p", Title: "pods share a gap on 2 nodes", Objects: []finding.ObjectRef{pod("a", "x")}}}
	unscoped.Finish()
	Compare(unscoped, "prev.json", []finding.Finding{full})
	if f := unscoped.Findings[0]; f.ID == full.ID || f.Baseline != New || len(unscoped.Baseline.Resolved) != 1 {
		t.Errorf("whole read: ID %s, baseline %q, %+v", f.ID, f.Baseline, unscoped.Baseline)
	}
}

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	prevFile := filepath.Join(dir, "prev.json")
	var b bytes.Buffer
	if err := report.WriteJSON(&b, rep("a", "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prevFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	prev, err := Load(prevFile)
	if err != nil {
		t.Fatal(err)
	}
	cur := rep("b", "c")
	Compare(cur, prevFile, prev)
	got := map[string]string{}
	for _, f := range cur.Findings {
		got[f.Title] = f.Baseline
	}
	if got["b"] != Unchanged || got["c"] != New || cur.Baseline.New != 1 || cur.Baseline.Unchanged != 1 {
		t.Errorf("states %v, baseline %+v", got, cur.Baseline)
	}
	if len(cur.Baseline.Resolved) != 1 || cur.Baseline.Resolved[0].Title != "a" {
		t.Errorf("resolved = %+v", cur.Baseline.Resolved)
	}
	if !NewAtOrAbove(cur, finding.High) || NewAtOrAbove(cur, finding.Critical) {
		t.Error("NewAtOrAbove wrong")
	}
	same := rep("a", "b")
	Compare(same, prevFile, prev)
	if NewAtOrAbove(same, finding.Info) || len(same.Baseline.Resolved) != 0 {
		t.Errorf("same findings: %+v", same.Baseline)
	}
}

func TestLoadOldReportWithoutIDsAndBadInput(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	os.WriteFile(old, []byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"AuditReport","findings":[{"check":"c","severity":"high","title":"b","objects":[{"apiVersion":"v1","kind":"Node","name":"b"}]}]}`), 0o644)
	prev, err := Load(old)
	if err != nil || len(prev) != 1 || prev[0].ID != rep("b").Findings[0].ID {
		t.Fatalf("old report: %v %+v", err, prev)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"kind":"Pod"}`), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "not a kubegap JSON report") {
		t.Errorf("bad: %v", err)
	}
}
