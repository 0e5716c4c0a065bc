package checktest

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

// FactsProblems returns why a facts file breaks the sourcing rules, one
// message each:
//   - every map in a list (a table row: an image, a regression, a signature,
//     a coordinator) has sources (https URLs) or source (one https URL);
//   - a file with facts outside such rows has top-level sources;
//   - any evidence field says verified, and no string value carries a marker
//     of an unchecked value (memory, uncertain, unverified).
func FactsProblems(data []byte) ([]string, error) {
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

// FactsSourced applies FactsProblems to an area package's data/*.yaml.
func FactsSourced(t testing.TB) {
	t.Helper()
	files, err := filepath.Glob("data/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no facts files in data/ (%v)", err)
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		problems, err := FactsProblems(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s", f, p)
		}
	}
}
