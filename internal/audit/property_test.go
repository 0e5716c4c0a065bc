package audit_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// inputs are the demo cluster and every check's fixtures, each directory
// whole and each file alone.
func inputs(t *testing.T) map[string]func() (*snapshot.Snapshot, error) {
	t.Helper()
	out := map[string]func() (*snapshot.Snapshot, error){"demo": demo.Snapshot}
	dirs, err := filepath.Glob(filepath.Join("..", "checks", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	// Each managed-cluster fixture is a cluster of its own.
	managed, _ := filepath.Glob(filepath.Join("..", "checks", "testdata", "managed", "*"))
	managed = slices.DeleteFunc(managed, func(d string) bool { return filepath.Base(d) == "gen" })
	dirs = append(slices.DeleteFunc(dirs, func(d string) bool { return filepath.Base(d) == "managed" }), managed...)
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		out[filepath.Base(dir)] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{dir}) }
		files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
		for _, f := range files {
			out[filepath.Base(dir)+"/"+filepath.Base(f)] = func() (*snapshot.Snapshot, error) { return snapshot.LoadPaths([]string{f}) }
		}
	}
	return out
}

// involves reports whether a finding's objects or evidence touch r: then
// losing it when r is gone is right.
func involves(f finding.Finding, r snapshot.Resource) bool {
	for _, o := range f.Objects {
		if o.Kind == r.Kind {
			return true
		}
	}
	for _, e := range f.Evidence {
		if strings.Contains(e, r.Kind) || strings.Contains(strings.ToLower(e), r.Resource) {
			return true
		}
	}
	return false
}

// key names what a finding is about: its check and its first object. With
// less input the same gap may be told with less detail (no crash loop seen
// without the ReplicaSets that tie pods to their Deployment), which is not
// a lost finding.
func key(f finding.Finding) string {
	return f.Check + "|" + f.Objects[0].String()
}

// TestRemovingAKindNeverPassesOrHidesFindings is the acceptance property of
// the evidence model: removing any one resource kind from the input never
// turns a fail into a pass, and never loses a finding whose objects and
// evidence do not involve the removed kind.
func TestRemovingAKindNeverPassesOrHidesFindings(t *testing.T) {
	all := checks.All()
	for name, load := range inputs(t) {
		s, err := load()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base := audit.Run(s, all, audit.Options{})
		for _, r := range snapshot.Known() {
			if s.Count(r) == 0 {
				continue
			}
			cut, err := load()
			if err != nil {
				t.Fatal(err)
			}
			cut.Drop(r)
			got := audit.Run(cut, all, audit.Options{})
			for i, c := range base.Checks {
				if c.Status == report.Fail && got.Checks[i].Status == report.Pass {
					t.Errorf("%s without %s: %s turned from fail to pass", name, r, c.ID)
				}
				if got.Checks[i].Status == report.Pass && c.Status != report.Pass {
					t.Errorf("%s without %s: %s passes, but %s with it", name, r, c.ID, c.Status)
				}
			}
			var kept []string
			for _, f := range got.Findings {
				kept = append(kept, key(f))
			}
			for _, f := range base.Findings {
				if !slices.Contains(kept, key(f)) && !involves(f, r) {
					t.Errorf("%s without %s: lost %s finding %q on %s", name, r, f.Check, f.Title, f.Objects[0])
				}
			}
		}
	}
}
