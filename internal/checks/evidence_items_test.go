package checks_test

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/evidence"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// freeTextOnly lists the checks whose findings may still carry only
// free-text evidence: no evidence item to resolve against the input. The
// list must shrink: a check that gives an item on every finding it makes
// in the corpus is an error here, and so is a check not listed that makes
// a finding without one. A check that makes no finding anywhere in the
// corpus must be listed, since nothing shows its evidence true.
var freeTextOnly = []string{
	"object-count-explosion",
}

// resolvedInOwnTests are checks that the corpus cannot make fire (they
// need what files do not carry, such as an EKS API server version) and
// whose package tests resolve their evidence items with
// checktest.EvidenceTrue instead.
var resolvedInOwnTests = []string{
	"eks-coredns-version",
	"image-manifest-compat",
	"jvm-cgroup-compat",
}

// corpusInput is one input the checks run on: the snapshot the loader
// made of some files, and the same files read as plain documents.
type corpusInput struct {
	name   string
	paths  []string
	images map[string]check.ImageFacts
	// complete marks every resource read whole, as a live read would:
	// rules that judge absence run too.
	complete bool
}

// evidenceCorpus is every input the checks' tests read: each fixture file
// alone, each fixture directory whole, each managed-cluster dump and the
// demo (with its image facts).
func evidenceCorpus(t *testing.T) []corpusInput {
	t.Helper()
	images, err := demo.ImageFacts()
	if err != nil {
		t.Fatal(err)
	}
	out := []corpusInput{{name: "demo", paths: []string{"../demo/cluster"}, images: images, complete: true}}
	dirs := map[string]bool{}
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !strings.Contains(filepath.ToSlash(p), "testdata") {
			return nil
		}
		if d.IsDir() {
			if filepath.Dir(p) == managedDir {
				out = append(out, corpusInput{name: p, paths: []string{p}, complete: true})
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(strings.TrimSuffix(p, ".gz"))
		if ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		out = append(out, corpusInput{name: p, paths: []string{p}})
		dirs[filepath.Dir(p)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range slices.Sorted(maps.Keys(dirs)) {
		out = append(out, corpusInput{name: d + "/", paths: []string{d}})
	}
	return out
}

// TestEvidenceItemsResolve runs every check over every input of the
// corpus, with and without a target version, and resolves each evidence
// item of each finding against the input's documents: every object it
// names is in the input, every field path reads the value it gives. It
// also keeps freeTextOnly true.
func TestEvidenceItemsResolve(t *testing.T) {
	all := checks.All()
	withItems := map[string]int{}    // check -> findings with evidence items
	withoutItems := map[string]int{} // check -> findings without
	example := map[string]string{}   // check -> a finding without items
	var items, mismatches, inputs int
	for _, in := range evidenceCorpus(t) {
		raw, err := evidence.ReadPaths(in.paths)
		if err != nil {
			t.Errorf("%s: reading the documents: %v", in.name, err)
			continue
		}
		for _, variant := range []string{"files", "complete"} {
			if variant == "complete" && in.complete {
				continue // the managed dumps and the demo are complete already
			}
			s, err := loadInput(in)
			var ie *snapshot.InputError
			if errors.As(err, &ie) {
				continue // a fixture of bad input: no check runs on it
			}
			if err != nil {
				t.Fatalf("%s: %v", in.name, err)
			}
			if variant == "complete" {
				checktest.Complete(s)
			}
			inputs++
			targets := []*check.KubeVersion{nil}
			if v, _, ok := check.ServerVersion(s); ok {
				targets = append(targets, &check.KubeVersion{Major: v.Major, Minor: v.Minor + 1})
			}
			for _, target := range targets {
				for _, c := range all {
					if c.Preflight && target == nil {
						continue
					}
					ctx := &check.Context{Snapshot: s, Images: in.images, Target: target}
					fs, err := c.Run(ctx)
					if err != nil {
						continue
					}
					for _, f := range fs {
						if len(f.EvidenceItems) == 0 {
							withoutItems[c.ID]++
							if example[c.ID] == "" {
								example[c.ID] = fmt.Sprintf("%s: %q", in.name, f.Title)
							}
							continue
						}
						withItems[c.ID]++
						for _, it := range f.EvidenceItems {
							items++
							if !slices.Contains(f.Evidence, it.String()) {
								t.Errorf("%s on %s: item %q is not a line of the finding's evidence", c.ID, in.name, it)
							}
							for _, m := range raw.Resolve(it) {
								mismatches++
								t.Errorf("%s on %s (%s, target %v), finding %q: %s", c.ID, in.name, variant, target, f.Title, m)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d inputs, %d evidence items resolved, %d mismatches", inputs, items, mismatches)
	if items == 0 {
		t.Fatal("no evidence item in the whole corpus: the test proves nothing")
	}
	var stale, missing []string
	for _, c := range all {
		listed := slices.Contains(freeTextOnly, c.ID)
		switch {
		case listed && withoutItems[c.ID] == 0 && withItems[c.ID] > 0:
			stale = append(stale, c.ID)
		case !listed && withoutItems[c.ID] > 0:
			missing = append(missing, fmt.Sprintf("%s (%d findings without, e.g. %s)", c.ID, withoutItems[c.ID], example[c.ID]))
		case !listed && withItems[c.ID] == 0 && !slices.Contains(resolvedInOwnTests, c.ID):
			missing = append(missing, c.ID+" (no finding in the corpus)")
		case slices.Contains(resolvedInOwnTests, c.ID) && (listed || withItems[c.ID] > 0):
			stale = append(stale, c.ID+" (in resolvedInOwnTests, but listed free-text or firing in the corpus)")
		}
	}
	for _, id := range freeTextOnly {
		if _, ok := checks.Lookup(id); !ok {
			stale = append(stale, id+" (no such check)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("freeTextOnly lists checks whose findings all carry evidence items: remove %s", strings.Join(stale, ", "))
	}
	if len(missing) > 0 {
		t.Errorf("checks with findings whose evidence is free text only, not in freeTextOnly:\n  %s", strings.Join(missing, "\n  "))
	}
	t.Logf("%d of %d checks still emit free-text evidence only (freeTextOnly)", len(freeTextOnly), len(all))
}

// loadInput loads an input as the audit does: the demo through its
// package, files through the offline loader.
func loadInput(in corpusInput) (*snapshot.Snapshot, error) {
	if in.name == "demo" {
		return demo.Snapshot()
	}
	return snapshot.LoadPaths(in.paths)
}
