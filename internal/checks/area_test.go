package checks

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEveryCheckHasAnArea: each check's area is a package directory under
// internal/checks, and every founding check is placed in one.
func TestEveryCheckHasAnArea(t *testing.T) {
	for _, c := range All() {
		a := Area(c)
		if a == "" {
			t.Errorf("%s: no area", c.ID)
			continue
		}
		if fi, err := os.Stat(filepath.Join(".", a)); err != nil || !fi.IsDir() {
			t.Errorf("%s: area %q is not a package under internal/checks", c.ID, a)
		}
	}
	for id := range foundingAreas {
		if _, ok := Lookup(id); !ok {
			t.Errorf("foundingAreas names %q, which is no check", id)
		}
	}
	if got := AreaOf("version-skew"); got != "versions" {
		t.Errorf("AreaOf(version-skew) = %q", got)
	}
	if got := AreaOf("no-such-check"); got != "" {
		t.Errorf("AreaOf(no-such-check) = %q, want empty", got)
	}
}
