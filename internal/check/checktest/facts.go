package checktest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// uncertain finds provenance words that mean a value was not checked.
var uncertain = regexp.MustCompile(`(?i)\b(from memory|uncertain|unverified|not verified|to be checked)\b`)

// FactsSourced applies the facts rules of internal/checks (facts_test.go)
// to an area package's data/*.yaml: every row of a table (a map in a list)
// has sources, https URLs; a file with facts outside rows has top-level
// sources; no value says it was not checked. Thresholds that are policy
// live in Go constants, not here.
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
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		loose := false
		for k, v := range doc {
			if k != "sources" && !isRows(v) {
				loose = true
			}
		}
		if loose {
			if bad := badURLs(doc["sources"]); bad != "" {
				t.Errorf("%s: top-level sources: %s (the file has facts outside sourced rows)", f, bad)
			}
		}
		walkFacts(t, f, doc)
	}
}

func walkFacts(t testing.TB, path string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			walkFacts(t, path+"."+k, child)
		}
	case []any:
		for i, child := range x {
			p := fmt.Sprintf("%s[%d]", path, i)
			if row, ok := child.(map[string]any); ok {
				if bad := badURLs(row["sources"]); bad != "" {
					t.Errorf("%s has no sources: %s", p, bad)
				}
			}
			walkFacts(t, p, child)
		}
	case string:
		if m := uncertain.FindString(x); m != "" {
			t.Errorf("%s says %q: verify the value at a source or remove it", path, m)
		}
	}
}

func isRows(v any) bool {
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

func badURLs(v any) string {
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
