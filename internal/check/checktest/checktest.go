// Package checktest is what the tests of checks share: loading fixtures
// through the real offline loader, running a check with the invariants
// every finding must meet, and keeping an area package's list of checks in
// step with its files.
package checktest

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Load reads testdata files (paths relative to the test's testdata/) into
// a snapshot through the loader `kubegap audit --from` uses. Files are an
// open world: nothing in them is complete (see Complete).
func Load(t testing.TB, files ...string) *snapshot.Snapshot {
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

// Complete marks every resource of s read and complete, as a live read of
// the whole cluster would: what the fixture lacks does not exist.
func Complete(s *snapshot.Snapshot) *snapshot.Snapshot {
	for _, r := range snapshot.Known() {
		if st := s.Status(r).Status; st == snapshot.StatusNotInInput || st == snapshot.StatusNotRead || st == snapshot.StatusRead {
			s.SetCoverage(r, snapshot.StatusRead, "")
			s.SetComplete(r, nil)
		}
	}
	return s
}

// Without drops every object of rs from s and records them as not in the
// input: the partial dump a user pastes (no ReplicaSets, no Nodes, no
// Events) made from the same cluster.
func Without(s *snapshot.Snapshot, rs ...snapshot.Resource) *snapshot.Snapshot {
	for _, r := range rs {
		s.Drop(r)
	}
	return s
}

// Run runs c on s and fails the test on an error other than
// not-evaluated, and on any finding that breaks the rules every finding
// keeps: it carries the check's ID, cites a case the check lists, names
// an object, and is no more severe than the check declares.
func Run(t testing.TB, c check.Check, s *snapshot.Snapshot) (fs []finding.Finding, ctx *check.Context, evaluated bool) {
	t.Helper()
	return RunImages(t, c, s, nil)
}

// Quiet fails unless c evaluates s with no finding and every rule judged
// on complete input: what a check's fixture without the gap must give.
func Quiet(t testing.TB, c check.Check, s *snapshot.Snapshot) {
	t.Helper()
	QuietImages(t, c, s, nil)
}

// QuietImages is Quiet with --inspect-images results.
func QuietImages(t testing.TB, c check.Check, s *snapshot.Snapshot, images map[string]check.ImageFacts) {
	t.Helper()
	fs, ctx, ok := RunImages(t, c, s, images)
	if !ok || len(fs) != 0 || len(ctx.Notes()) != 0 {
		t.Fatalf("check %s: evaluated %v, findings %+v, notes %v; want evaluated, none and none", c.ID, ok, fs, ctx.Notes())
	}
}

// RunImages is Run with --inspect-images results (nil: not inspected).
func RunImages(t testing.TB, c check.Check, s *snapshot.Snapshot, images map[string]check.ImageFacts) (fs []finding.Finding, ctx *check.Context, evaluated bool) {
	t.Helper()
	ctx = &check.Context{Snapshot: s, Images: images}
	fs, err := c.Run(ctx)
	if errors.Is(err, check.ErrNotEvaluated) {
		return nil, ctx, false
	}
	if err != nil {
		t.Fatalf("check %s: %v", c.ID, err)
	}
	cites := map[string]bool{}
	for _, l := range c.Cases {
		cites[l.ID] = true
	}
	for _, f := range fs {
		if f.Check != c.ID {
			t.Errorf("finding of %s carries check ID %q", c.ID, f.Check)
		}
		if len(f.Cases) == 0 {
			t.Errorf("finding %q cites no case", f.Title)
		}
		for _, id := range f.Cases {
			if !cites[id] {
				t.Errorf("finding %q cites %s, which check %s does not list", f.Title, id, c.ID)
			}
		}
		if len(f.Objects) == 0 {
			t.Errorf("finding %q names no object", f.Title)
		}
		if f.Severity > c.Severity {
			t.Errorf("finding %q is %v, above the check's declared %v", f.Title, f.Severity, c.Severity)
		}
		if f.Title == "" || f.Message == "" || f.Remediation == "" || len(f.Evidence) == 0 {
			t.Errorf("finding %q lacks a title, message, remediation or evidence", f.Title)
		}
	}
	return fs, ctx, true
}

// HasObject reports whether any finding names the object kind/namespace/name.
func HasObject(fs []finding.Finding, kind, namespace, name string) bool {
	for _, f := range fs {
		for _, o := range f.Objects {
			if o.Kind == kind && o.Namespace == namespace && o.Name == name {
				return true
			}
		}
	}
	return false
}

// ctor finds check constructors: func nameCheck() check.Check { (the bare
// Check of package check itself too).
var ctor = regexp.MustCompile(`(?m)^func ([a-z][A-Za-z0-9]*Check)\(\) (?:check\.)?Check \{`)

// Registered fails when a constructor in the test's package directory is
// not listed in its checks.go, or when Checks() returns another number of
// checks than there are constructors: a check cannot be written and then
// silently never run.
func Registered(t *testing.T, listed []check.Check) {
	t.Helper()
	if found := Constructors(t, ".", "checks.go"); found != len(listed) {
		t.Errorf("found %d check constructors, Checks() returns %d", found, len(listed))
	}
}

// Constructors counts the check constructors in dir's non-test Go files
// and fails on each one that listFile (in dir) does not call.
func Constructors(t *testing.T, dir, listFile string) int {
	t.Helper()
	reg, err := os.ReadFile(filepath.Join(dir, listFile))
	if err != nil {
		t.Fatalf("%s lists the checks of %s: %v", listFile, dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ctor.FindAllSubmatch(src, -1) {
			found++
			if !strings.Contains(string(reg), string(m[1])+"(),") {
				t.Errorf("%s: %s() is not listed in %s", filepath.Join(dir, e.Name()), m[1], listFile)
			}
		}
	}
	return found
}
