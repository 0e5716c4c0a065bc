package checktest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/evidence"
	"github.com/kubegap/kubegap/internal/finding"
)

// EvidenceTrue fails unless every evidence item of fs reads back from the
// testdata files (as Load names them) and is a line of its finding's
// evidence. It returns how many items it resolved. The registry-wide test
// in internal/checks does this over every fixture; a check whose findings
// need more than the files (a server version, image facts) calls it on
// the findings its own test made.
func EvidenceTrue(t testing.TB, fs []finding.Finding, files ...string) int {
	t.Helper()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join("testdata", f)
	}
	in, err := evidence.ReadPaths(paths)
	if err != nil {
		t.Fatalf("reading the fixture's documents: %v", err)
	}
	n := 0
	for _, f := range fs {
		for _, it := range f.EvidenceItems {
			n++
			if !slices.Contains(f.Evidence, it.String()) {
				t.Errorf("finding %q: item %q is not a line of its evidence", f.Title, it)
			}
			for _, m := range in.Resolve(it) {
				t.Errorf("finding %q: %s", f.Title, m)
			}
		}
	}
	return n
}
