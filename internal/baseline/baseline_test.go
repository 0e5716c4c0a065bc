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

func rep(titles ...string) *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceDemo}, nil)
	for _, t := range titles {
		r.Findings = append(r.Findings, finding.Finding{Check: "c", Severity: finding.High, Title: t,
			Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: t}}})
	}
	r.Finish()
	return r
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
