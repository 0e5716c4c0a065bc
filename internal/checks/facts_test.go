package checks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestFactsTablesSourced applies the sourcing rules to every file in
// data/: a fact without a source, or one marked memory or uncertain, fails.
func TestFactsTablesSourced(t *testing.T) {
	files, err := filepath.Glob("data/*.yaml")
	// The area packages' facts files follow the same rules.
	area, _ := filepath.Glob("*/data/*.yaml")
	files = append(files, area...)
	if err != nil || len(files) == 0 {
		t.Fatalf("no facts files found (%v)", err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			problems, err := checktest.FactsProblems(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// TestFactsProblemsRules shows each rule firing on a broken fixture, so the
// test above cannot pass by checking nothing.
func TestFactsProblemsRules(t *testing.T) {
	tests := []struct {
		name, doc string
		want      string // substring of a problem; "" = no problems
	}{
		{"sourced rows and file", "sources: [https://a.example]\nlimits: [a, b]\nrows:\n- {id: x, sources: [https://b.example]}\n- {id: y, source: https://c.example}\n", ""},
		{"rows only need no file sources", "rows:\n- {id: x, sources: [https://b.example]}\n", ""},
		{"thresholds are policy", "thresholds: {days: 3}\nrows:\n- {id: x, sources: [https://b.example]}\n", ""},
		{"row without sources", "rows:\n- {id: x}\n", "rows[0] has no sources"},
		{"row with http source", "rows:\n- {id: x, sources: [http://b.example]}\n", "not an https URL"},
		{"row with empty sources", "rows:\n- {id: x, sources: []}\n", "rows[0] has no sources"},
		{"nested row without sources", "rows:\n- {id: x, sources: [https://b.example], parts: [{id: y}]}\n", "rows[0].parts[0] has no sources"},
		{"loose facts without file sources", "defaults: {timeout: 10}\n", "top-level sources"},
		{"string list without file sources", "paths: [/opt/cni/bin]\n", "top-level sources"},
		{"evidence memory", "rows:\n- {id: x, evidence: memory, sources: [https://b.example]}\n", "evidence is memory"},
		{"evidence uncertain", "rows:\n- {id: x, evidence: uncertain, sources: [https://b.example]}\n", "evidence is uncertain"},
		{"note from memory", "rows:\n- {id: x, note: the date is from memory, sources: [https://b.example]}\n", `says "from memory"`},
		{"note uncertain", "rows:\n- {id: x, note: glibc 2.39 is uncertain, sources: [https://b.example]}\n", `says "uncertain"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems, err := checktest.FactsProblems([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(problems) != 0 {
					t.Errorf("problems %v, want none", problems)
				}
				return
			}
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, tt.want)
			}
			if !found {
				t.Errorf("problems %v, want one containing %q", problems, tt.want)
			}
		})
	}
}
