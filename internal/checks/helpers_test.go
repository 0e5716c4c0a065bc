package checks

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// loadFixture reads testdata files (relative to testdata/) into a snapshot
// through the same offline loader `kubegap audit --from` uses.
func loadFixture(t *testing.T, files ...string) *snapshot.Snapshot {
	t.Helper()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join("testdata", f)
	}
	s, err := snapshot.LoadPaths(paths)
	if err != nil {
		t.Fatalf("loading fixture: %v", err)
	}
	return s
}

// runCheck runs a check on a snapshot and fails the test on any error other
// than not-evaluated, which it reports through evaluated.
func runCheck(t *testing.T, c Check, s *snapshot.Snapshot) (fs []finding.Finding, evaluated bool) {
	t.Helper()
	fs, err := c.Run(&Context{Snapshot: s})
	if errors.Is(err, ErrNotEvaluated) {
		return nil, false
	}
	if err != nil {
		t.Fatalf("check %s: %v", c.ID, err)
	}
	for _, f := range fs {
		if f.Check != c.ID {
			t.Errorf("finding of %s carries check ID %q", c.ID, f.Check)
		}
		if len(f.Cases) == 0 {
			t.Errorf("finding %q cites no case", f.Title)
		}
		if len(f.Objects) == 0 {
			t.Errorf("finding %q names no object", f.Title)
		}
		if f.Severity > c.Severity {
			t.Errorf("finding %q is %v, above the check's declared %v", f.Title, f.Severity, c.Severity)
		}
	}
	return fs, true
}

// hasObject reports whether any finding names the object kind/namespace/name.
func hasObject(fs []finding.Finding, kind, namespace, name string) bool {
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Kind == kind && o.Namespace == namespace && o.Name == name {
				return true
			}
		}
	}
	return false
}
