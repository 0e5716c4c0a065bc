package casepages

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
)

const dir = "../../docs/cases"

// TestPagesMatchTheLibrary keeps docs/cases true to the library: a page
// per case, the index, and nothing else (a page of a removed case would
// be a link that tells an old story). UPDATE_DOCS=1 rewrites them.
func TestPagesMatchTheLibrary(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	want := Pages(lib, checks.All())
	if len(want) != len(lib.Cases())+1 {
		t.Fatalf("%d pages for %d cases", len(want), len(lib.Cases()))
	}
	if os.Getenv("UPDATE_DOCS") != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
		for _, p := range old {
			if _, ok := want[filepath.Base(p)]; !ok {
				os.Remove(p)
			}
		}
		for name, b := range want {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("%v: run UPDATE_DOCS=1 go test ./internal/casepages", err)
	}
	for _, e := range entries {
		if _, ok := want[e.Name()]; !ok {
			t.Errorf("docs/cases/%s is no page of the library: run UPDATE_DOCS=1 go test ./internal/casepages", e.Name())
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("docs/cases/%s is stale or missing: run UPDATE_DOCS=1 go test ./internal/casepages", name)
		}
	}
}

// TestPageLinksResolve: every relative link of the pages names a file of
// the repository (and a check anchor docs/checks.md has); the others are
// the cases' cited sources.
func TestPageLinksResolve(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	checksMD, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	sources := map[string]bool{}
	for _, c := range lib.Cases() {
		for _, s := range c.Sources {
			sources[s.URL] = true
		}
	}
	link := regexp.MustCompile(`\]\(<?([^)>]+)>?\)`)
	for name, b := range Pages(lib, checks.All()) {
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				if !sources[target] {
					t.Errorf("%s links to %s, not a source of any case", name, target)
				}
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
				t.Errorf("%s links to %s: %v", name, target, err)
			}
			if anchor != "" && !bytes.Contains(checksMD, []byte("\n## "+anchor+"\n")) {
				t.Errorf("%s links to %s: docs/checks.md has no such heading", name, target)
			}
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"a *b* [c]\n  d":              `a \*b\* \[c\] d`,
		"run `kubectl get <x>_y` now": "run `kubectl get <x>_y` now",
		"odd ` tick_":                 "odd \\` tick\\_",
	} {
		if got := text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}
