package checks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// policyKeys are top-level values that are our own choices, not facts a
// source could back: thresholds the checks apply.
var policyKeys = map[string]bool{"thresholds": true}

// uncertainMarker finds provenance words that mean a value was not checked.
var uncertainMarker = regexp.MustCompile(`(?i)\b(from memory|uncertain|unverified|not verified|to be checked)\b`)

// factsProblems returns why a facts file breaks the sourcing rules, one
// message each:
//   - every map in a list (a table row: an image, a regression, a signature,
//     a coordinator) has sources (https URLs) or source (one https URL);
//   - a file with facts outside such rows has top-level sources;
//   - any evidence field says verified, and no string value carries a marker
//     of an unchecked value (memory, uncertain, unverified).
func factsProblems(data []byte) ([]string, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	looseFacts := false
	for key, v := range doc {
		if key == "sources" || policyKeys[key] {
			continue
		}
		if !isRowList(v) {
			looseFacts = true
		}
	}
	if looseFacts {
		if bad := checkURLs(doc["sources"]); bad != "" {
			add("top-level sources: %s (the file has facts outside sourced rows)", bad)
		}
	}

	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch t := v.(type) {
		case map[string]any:
			for k, child := range t {
				if k == "evidence" && child != "verified" {
					add("%s.evidence is %v, not verified", path, child)
				}
				walk(path+"."+k, child)
			}
		case []any:
			for i, child := range t {
				p := fmt.Sprintf("%s[%d]", path, i)
				if row, ok := child.(map[string]any); ok {
					bad := checkURLs(row["sources"])
					if bad != "" {
						if src, ok := row["source"].(string); ok {
							bad = checkURLs([]any{src})
						}
					}
					if bad != "" {
						add("%s has no sources: %s", p, bad)
					}
				}
				walk(p, child)
			}
		case string:
			if m := uncertainMarker.FindString(t); m != "" {
				add("%s says %q: verify the value at a source or remove it", path, m)
			}
		}
	}
	walk("", doc)
	sort.Strings(problems)
	return problems, nil
}

// isRowList reports whether v is a non-empty list of maps (table rows).
func isRowList(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return false
	}
	for _, item := range list {
		if _, ok := item.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// checkURLs returns "" when v is a non-empty list of https URLs, or what is
// wrong with it.
func checkURLs(v any) string {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return "missing or empty"
	}
	for _, item := range list {
		s, ok := item.(string)
		if !ok || !strings.HasPrefix(s, "https://") || len(s) <= len("https://") {
			return fmt.Sprintf("%v is not an https URL", item)
		}
	}
	return ""
}

// TestFactsTablesSourced applies the sourcing rules to every file in
// data/: a fact without a source, or one marked memory or uncertain, fails.
func TestFactsTablesSourced(t *testing.T) {
	files, err := filepath.Glob("data/*.yaml")
	// Area packages keep their facts in <area>/data/.
	areaFiles, err2 := filepath.Glob("*/data/*.yaml")
	files = append(files, areaFiles...)
	if err == nil {
		err = err2
	}
	if err != nil || len(files) == 0 {
		t.Fatalf("no facts files found (%v)", err)
	}
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			problems, err := factsProblems(data)
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
			problems, err := factsProblems([]byte(tt.doc))
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
