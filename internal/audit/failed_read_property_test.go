package audit_test

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/checks/upgrade"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// completeInputs are inputs every check can pass on: the demo cluster, the
// managed-cluster recipe dumps, and each fixture file of every check (the
// founding ones and every area's) alone, read as a live read of a whole
// cluster would be (what the file lacks does not exist). A check's gap
// fixture then fails and its clean fixture passes, so losing an input can
// be seen to change either.
func completeInputs(t *testing.T) map[string]func() (*snapshot.Snapshot, error) {
	t.Helper()
	out := map[string]func() (*snapshot.Snapshot, error){"demo": demo.Snapshot}
	managed, _ := filepath.Glob(filepath.Join("..", "checks", "testdata", "managed", "*"))
	for _, dir := range managed {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() || filepath.Base(dir) == "gen" {
			continue
		}
		out["managed/"+filepath.Base(dir)] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{dir}) }
	}
	root := filepath.Join("..", "checks")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "managed" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(path, string(filepath.Separator)+"testdata"+string(filepath.Separator)) {
			return nil
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".json" {
			return nil
		}
		name, _ := filepath.Rel(root, path)
		out[name] = func() (*snapshot.Snapshot, error) {
			s, err := snapshot.LoadPaths([]string{path})
			if err != nil {
				return nil, err
			}
			return checktest.Complete(s), nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readers maps each resource to the checks that read it, and whether as a
// required input.
func readers(all []check.Check) map[snapshot.Resource]map[string]bool {
	out := map[snapshot.Resource]map[string]bool{}
	for _, c := range all {
		for _, in := range c.Reads {
			if out[in.Resource] == nil {
				out[in.Resource] = map[string]bool{}
			}
			out[in.Resource][c.ID] = !in.Optional
		}
	}
	return out
}

// told is what a check's findings say, as far as an audit's verdict and
// --fail-on go: for each object a finding is about, the highest severity.
func told(fs []finding.Finding) map[string]map[string]finding.Severity {
	out := map[string]map[string]finding.Severity{}
	for _, f := range fs {
		if out[f.Check] == nil {
			out[f.Check] = map[string]finding.Severity{}
		}
		k := f.Objects[0].String()
		out[f.Check][k] = max(out[f.Check][k], f.Severity)
	}
	return out
}

// weaker reports whether got lacks a finding of with, or tells one at a
// lower severity. A finding got adds is no loss: the objects that are
// there prove it.
func weaker(got, with map[string]finding.Severity) bool {
	for k, sev := range with {
		if g, ok := got[k]; !ok || g < sev {
			return true
		}
	}
	return false
}

// names reports whether a rule result points at r: as a missing input, or
// in what the check said about the rule.
func names(rr report.RuleResult, r snapshot.Resource) bool {
	if slices.Contains(rr.Missing, r.String()) {
		return true
	}
	reason := strings.ToLower(rr.Reason)
	return strings.Contains(reason, r.Resource) || strings.Contains(reason, strings.ToLower(r.Kind))
}

// failedReads are the ways a read of one resource falls short: it failed
// (its objects are gone) or it holds objects but not all of them.
var failedReads = []struct {
	name string
	cut  func(s *snapshot.Snapshot, r snapshot.Resource)
}{
	{"failed", func(s *snapshot.Snapshot, r snapshot.Resource) {
		s.Drop(r)
		s.SetCoverage(r, snapshot.StatusError, "the server is currently unable to handle the request")
	}},
	{"incomplete", func(s *snapshot.Snapshot, r snapshot.Resource) {
		s.SetCoverage(r, snapshot.StatusRead, "") // the objects stay; they are not known to be all
	}},
}

// TestFailedReadNeverPasses is issue 28's property for every registered
// check, on every input it can pass on: when one resource it reads fails
// or is incomplete,
//   - a check that reads it as required input is never pass, and a rule
//     of it is partial or skipped naming the resource;
//   - a check that reads it as optional input passes only where it passes
//     with it: a finding that an optional input's loss hides, or a fail
//     it turns into a pass, needs that input in a rule's Needs (or the
//     check saying so with Context.Incomplete);
//   - a check whose rules all say they looked at everything never loses a
//     finding, or tells one at a lower severity, than with the input: a
//     high that a failed read lowers to medium would pass --fail-on high.
func TestFailedReadNeverPasses(t *testing.T) {
	all := checks.All()
	// The preflight checks run only with a target: they get a pass of
	// their own, at the newest target kubegap judges.
	newest, err := upgrade.NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	passes := []struct {
		opts audit.Options
		cs   []check.Check
	}{
		{audit.Options{}, audit.ForTarget(all, nil)},
		{audit.Options{Target: &newest}, slices.DeleteFunc(slices.Clone(all), func(c check.Check) bool { return !c.Preflight })},
	}
	inputs := completeInputs(t)
	if len(inputs) < 100 {
		t.Fatalf("only %d inputs found: the fixture walk is broken", len(inputs))
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		load := inputs[name]
		s, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, pass := range passes {
			failedReadPass(t, name, load, s, pass.cs, pass.opts)
		}
	}
}

// failedReadPass checks TestFailedReadNeverPasses's property for the
// checks cs on one input s (load makes a fresh copy of it).
func failedReadPass(t *testing.T, name string, load func() (*snapshot.Snapshot, error), s *snapshot.Snapshot, cs []check.Check, opts audit.Options) {
	t.Helper()
	reads := readers(cs)
	base := map[string]report.Status{}
	baseRep := audit.Run(s, cs, opts)
	for _, c := range baseRep.Checks {
		base[c.ID] = c.Status
	}
	baseTold := told(baseRep.Findings)
	for _, r := range snapshot.Known() {
		ids := reads[r]
		if len(ids) == 0 {
			continue
		}
		readers := slices.DeleteFunc(slices.Clone(cs), func(c check.Check) bool { _, ok := ids[c.ID]; return !ok })
		for _, mode := range failedReads {
			if mode.name == "incomplete" && s.Count(r) == 0 {
				continue // no objects to keep: the same as failed
			}
			cut, err := load()
			if err != nil {
				t.Fatal(err)
			}
			mode.cut(cut, r)
			got := audit.Run(cut, readers, opts)
			gotTold := told(got.Findings)
			for _, c := range got.Checks {
				complete := !slices.ContainsFunc(c.Rules, func(rr report.RuleResult) bool { return rr.Status != report.RuleEvaluated })
				switch {
				case complete && weaker(gotTold[c.ID], baseTold[c.ID]):
					t.Errorf("%s, %s %s: %s loses or lowers a finding (%q; with it %q) and every rule says it looked at everything",
						name, r, mode.name, c.ID, gotTold[c.ID], baseTold[c.ID])
				case ids[c.ID] && c.Status == report.Pass:
					t.Errorf("%s, %s %s: %s passes, but reads it as required input", name, r, mode.name, c.ID)
				case ids[c.ID] && c.Status != report.NotEvaluated && !slices.ContainsFunc(c.Rules, func(rr report.RuleResult) bool {
					return rr.Status != report.RuleEvaluated && names(rr, r)
				}):
					t.Errorf("%s, %s %s: %s is %s, but no rule names %s as missing", name, r, mode.name, c.ID, c.Status, r)
				case c.Status == report.Pass && base[c.ID] != report.Pass:
					t.Errorf("%s, %s %s: %s passes, but is %s with it", name, r, mode.name, c.ID, base[c.ID])
				}
			}
		}
	}
}
