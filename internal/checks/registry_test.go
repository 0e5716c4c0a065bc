package checks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/library"
)

// TestEveryCheckIsRegistered: each check file's constructor is listed in
// All(), so a check cannot be written and then silently never run.
func TestEveryCheckIsRegistered(t *testing.T) {
	ctor := regexp.MustCompile(`(?m)^func ([a-z][A-Za-z0-9]*Check)\(\) Check \{`)
	reg, err := os.ReadFile("registry.go")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ctor.FindAllSubmatch(src, -1) {
			found++
			if !strings.Contains(string(reg), string(m[1])+"(),") {
				t.Errorf("%s: %s() is not listed in registry.go", e.Name(), m[1])
			}
		}
	}
	// Area packages: each lists its own constructors (checktest.Registered);
	// here their count joins the founding ones.
	areaCtor := regexp.MustCompile(`(?m)^func ([a-z][A-Za-z0-9]*Check)\(\) check\.Check \{`)
	areaFiles, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range areaFiles {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		found += len(areaCtor.FindAllSubmatch(src, -1))
	}
	if found != len(All()) {
		t.Errorf("found %d check constructors, All() returns %d", found, len(All()))
	}
}

// TestChecksAreWellFormed: IDs unique and lowercase-hyphenated, every field
// a user or the engine relies on is set.
func TestChecksAreWellFormed(t *testing.T) {
	id := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, c := range All() {
		if !id.MatchString(c.ID) || seen[c.ID] {
			t.Errorf("bad or duplicate check ID %q", c.ID)
		}
		seen[c.ID] = true
		if c.Title == "" || c.Description == "" || c.Run == nil || len(c.Reads) == 0 || len(c.Cases) == 0 {
			t.Errorf("check %s lacks a title, description, Run, inputs or cases", c.ID)
		}
		if got, ok := Lookup(c.ID); !ok || got.ID != c.ID {
			t.Errorf("Lookup(%q) failed", c.ID)
		}
	}
}

// TestChecksAndCasesCiteEachOther applies the library's citation rules to
// the real registry and the embedded library: every check cites existing
// cases, and every case marked detectable is cited by a check or says why
// no check covers it yet.
func TestChecksAndCasesCiteEachOther(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	citations := map[string][]string{}
	for _, c := range All() {
		citations[c.ID] = c.Cases
	}
	for _, err := range library.ValidateCitations(lib, citations) {
		t.Error(err)
	}
}
