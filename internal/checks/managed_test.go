package checks_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// managedDir holds one recipe dump per managed-cluster shape (AKS, EKS,
// GKE, k3s, kind); its README.md says where each shape comes from and
// lists, under "Real gaps", the high findings that are true on them.
const managedDir = "testdata/managed"

// managedProviders are the fixtures the issue asks for. A new directory
// under testdata/managed is picked up on its own; these must be there.
var managedProviders = []string{"aks", "eks", "gke", "k3s", "kind"}

// fixedChecks are the checks whose false findings are being fixed on other
// branches (issue 12). Only they may be skipped on a managed fixture, and
// only with the finding recorded in managedSkips.
var fixedChecks = []string{
	"webhook-blast-radius", "pdb-blocks-drain", "image-pull-always", "node-os-lifecycle",
	"host-binary-glibc", "containerd-chained-cni", "pod-sandbox-failures",
}

// managedSkips names, by "fixture/check", a false high finding a check
// raises on a managed fixture while its fix is on another branch, and
// why the finding is false. The lead removes an entry when the fix lands.
var managedSkips = map[string]string{}

// TestManagedClustersQuietAtHigh audits every managed fixture through the
// real loader and engine with every registered check, one subtest per
// fixture and check, so a new check is run on every fixture without
// editing this test. A high or critical finding fails unless the README
// lists it as a real gap with its source.
func TestManagedClustersQuietAtHigh(t *testing.T) {
	fixtures := managedFixtures(t)
	gaps := readRealGaps(t, filepath.Join(managedDir, "README.md"))
	for key := range managedSkips {
		fixture, check, _ := strings.Cut(key, "/")
		if !slices.Contains(fixtures, fixture) || !slices.Contains(fixedChecks, check) {
			t.Errorf("managedSkips %q: a skip is only for a fixture here and a check being fixed (%s)", key, strings.Join(fixedChecks, ", "))
		}
	}
	used := map[realGap]bool{}
	for _, fixture := range fixtures {
		t.Run(fixture, func(t *testing.T) {
			dir := filepath.Join(managedDir, fixture)
			s, err := snapshot.LoadPaths([]string{dir})
			if err != nil {
				t.Fatalf("loading %s: %v", dir, err)
			}
			assertRecipeComplete(t, s)
			for _, c := range checks.All() {
				t.Run(c.ID, func(t *testing.T) {
					r := audit.Run(s, []checks.Check{c}, audit.Options{})
					res := r.Checks[0]
					for _, rr := range res.Rules {
						if len(rr.Missing) > 0 {
							t.Errorf("rule %s lacks input %v in a recipe dump: %s", rr.ID, rr.Missing, rr.Reason)
						}
						if rr.Status != report.RuleEvaluated {
							t.Logf("rule %s %s: %s", rr.ID, rr.Status, rr.Reason)
						}
					}
					t.Logf("status %s %s", res.Status, res.Reason)
					var high []finding.Finding
					for _, f := range r.Findings {
						t.Logf("%-8v %s", f.Severity, f.Title)
						if f.Severity < finding.High {
							continue
						}
						if g, ok := gaps.match(fixture, f); ok {
							used[g] = true
							continue
						}
						high = append(high, f)
					}
					if len(high) == 0 {
						return
					}
					if why, ok := managedSkips[fixture+"/"+c.ID]; ok {
						t.Skipf("false %v finding %q, skipped until the fix of %s lands: %s", high[0].Severity, high[0].Title, c.ID, why)
					}
					for _, f := range high {
						t.Errorf("%v finding on a fresh %s cluster: %s\n  %s\n  objects: %v\n  evidence: %s",
							f.Severity, fixture, f.Title, f.Message, f.Objects, strings.Join(f.Evidence, "\n    "))
					}
				})
			}
		})
	}
	// A listed gap that no check reports any more is stale: the README
	// must say what the fixtures show.
	for _, g := range gaps {
		if !used[g] {
			t.Errorf("README lists a real gap no check reports: %+v", g)
		}
	}
}

// managedFixtures lists the fixture directories and checks the required
// providers are among them.
func managedFixtures(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(managedDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(managedDir, e.Name(), snapshot.RecipeAPIResources)); err != nil {
			t.Errorf("%s is not a recipe dump (no %s)", e.Name(), snapshot.RecipeAPIResources)
			continue
		}
		out = append(out, e.Name())
	}
	for _, p := range managedProviders {
		if !slices.Contains(out, p) {
			t.Errorf("no managed fixture %s under %s", p, managedDir)
		}
	}
	return out
}

// assertRecipeComplete checks that the dump's layout made every resource
// the checks read complete: each was dumped whole or is not served.
func assertRecipeComplete(t *testing.T, s *snapshot.Snapshot) {
	t.Helper()
	if s.Source.ServerVersion == "" {
		t.Errorf("no server version read from %s", snapshot.RecipeVersion)
	}
	for _, r := range audit.Resources(checks.All()) {
		cov := s.Status(r)
		if !cov.Complete || len(cov.Namespaces) > 0 {
			t.Errorf("%s: coverage %s, complete=%v: the recipe layout should make it complete", r, cov.Status, cov.Complete)
		}
	}
	if s.Count(snapshot.Nodes) < 3 {
		t.Errorf("%d nodes; a managed fixture has at least 3", s.Count(snapshot.Nodes))
	}
}

// realGap is one row of the README's "Real gaps" table: a high finding
// that is true on a fresh cluster of that shape, with the public source
// that shows it.
type realGap struct {
	Fixture, Check, Object, Source string
}

type realGaps []realGap

// match finds the gap a finding is: same fixture and check, and the
// finding names the object (Kind/namespace/name or Kind/name).
func (gs realGaps) match(fixture string, f finding.Finding) (realGap, bool) {
	for _, g := range gs {
		if g.Fixture != fixture || g.Check != f.Check {
			continue
		}
		for _, o := range f.Objects {
			ref := o.Kind + "/" + o.Name
			if o.Namespace != "" {
				ref = o.Kind + "/" + o.Namespace + "/" + o.Name
			}
			if ref == g.Object {
				return g, true
			}
		}
	}
	return realGap{}, false
}

var gapRow = regexp.MustCompile("^\\|\\s*`?([a-z0-9-]+)`?\\s*\\|\\s*`?([a-z0-9-]+)`?\\s*\\|\\s*`?([^|`]+?)`?\\s*\\|\\s*(https://\\S+)\\s*\\|")

// readRealGaps reads the table under the README's "## Real gaps" heading:
// | fixture | check | Kind/namespace/name | https source |.
func readRealGaps(t *testing.T, path string) realGaps {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var gs realGaps
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == "## Real gaps"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "| fixture") || strings.HasPrefix(line, "|--") || strings.HasPrefix(line, "| ---") {
			continue
		}
		m := gapRow.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("README real-gap row %q is not | fixture | check | object | https source |", line)
			continue
		}
		gs = append(gs, realGap{Fixture: m[1], Check: m[2], Object: m[3], Source: m[4]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return gs
}
