package checks

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The founding checks' tests use the same helpers as the area packages'.

// loadFixture is checktest.Load: testdata files through the offline loader.
func loadFixture(t *testing.T, files ...string) *snapshot.Snapshot {
	t.Helper()
	return checktest.Load(t, files...)
}

// runCheck is checktest.Run without the context: it fails the test on an
// error other than not-evaluated and on a finding that breaks the rules
// every finding keeps.
func runCheck(t *testing.T, c Check, s *snapshot.Snapshot) (fs []finding.Finding, evaluated bool) {
	t.Helper()
	fs, _, evaluated = checktest.Run(t, c, s)
	return fs, evaluated
}

// hasObject is checktest.HasObject.
func hasObject(fs []finding.Finding, kind, namespace, name string) bool {
	return checktest.HasObject(fs, kind, namespace, name)
}

// quotes reports whether an evidence item of f quotes the field path of
// the object kind/name.
func quotes(f finding.Finding, kind, name, path string) bool {
	for _, it := range f.EvidenceItems {
		for _, o := range it.Objects {
			if o.Kind != kind || o.Name != name {
				continue
			}
			for _, fl := range it.Fields {
				if fl.Path == path {
					return true
				}
			}
		}
	}
	return false
}
