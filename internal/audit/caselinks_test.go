package audit

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestFindingsCarryTheirCheckLinks: the audit gives each finding the
// relation its check declares for every case it cites, in the order of
// Cases; links a check's Run set itself are kept.
func TestFindingsCarryTheirCheckLinks(t *testing.T) {
	c := check.Check{ID: "linked", Title: "linked", Severity: finding.High, Reads: check.Needs(snapshot.Nodes),
		Cases: check.Cite(check.Detects("b"), check.Prevents("a")),
		Run: func(*check.Context) ([]finding.Finding, error) {
			obj := []finding.ObjectRef{{Kind: "Node", Name: "n"}}
			return []finding.Finding{
				{Severity: finding.High, Title: "one", Objects: obj, Cases: []string{"a", "b"}},
				{Severity: finding.High, Title: "two", Objects: obj, Cases: []string{"b"},
					CaseLinks: []finding.CaseLink{{ID: "b", Relation: finding.Related}}},
			}, nil
		}}
	r := Run(&snapshot.Snapshot{}, []check.Check{c}, Options{})
	if len(r.Findings) != 2 {
		t.Fatalf("%d findings, want 2", len(r.Findings))
	}
	for _, f := range r.Findings {
		want := map[string][]finding.CaseLink{
			"one": {{ID: "a", Relation: finding.Prevents}, {ID: "b", Relation: finding.Detects}},
			"two": {{ID: "b", Relation: finding.Related}},
		}[f.Title]
		if len(f.CaseLinks) != len(want) {
			t.Fatalf("%s: links %v, want %v", f.Title, f.CaseLinks, want)
		}
		for i := range want {
			if f.CaseLinks[i] != want[i] {
				t.Errorf("%s: links %v, want %v", f.Title, f.CaseLinks, want)
			}
		}
	}
}
