package checktest

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// What the founding checks' tests look for in findings, shared now that
// those tests live in the runtime, registries, versions and availability
// packages.

// FindingAbout returns the first finding that names the object.
func FindingAbout(fs []finding.Finding, kind, namespace, name string) (finding.Finding, bool) {
	for _, f := range fs {
		if HasObject([]finding.Finding{f}, kind, namespace, name) {
			return f, true
		}
	}
	return finding.Finding{}, false
}

// EvidenceHas reports whether one evidence line of f contains all the parts.
func EvidenceHas(f finding.Finding, parts ...string) bool {
	for _, e := range f.Evidence {
		ok := true
		for _, p := range parts {
			if !strings.Contains(e, p) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// AnyEvidence reports whether an evidence line of f contains sub.
func AnyEvidence(f finding.Finding, sub string) bool {
	return EvidenceHas(f, sub)
}

// NodeNames lists the Node objects a finding names, sorted.
func NodeNames(f finding.Finding) []string {
	var out []string
	for _, o := range f.Objects {
		if o.Kind == "Node" {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out
}

// Quotes reports whether an evidence item of f quotes the field path of
// the object kind/name.
func Quotes(f finding.Finding, kind, name, path string) bool {
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

// RunNotes runs c on s as it is and returns its findings and what it noted
// about its rules; any error, not-evaluated included, fails the test.
func RunNotes(t testing.TB, c check.Check, s *snapshot.Snapshot) ([]finding.Finding, map[string]check.RuleNote) {
	t.Helper()
	ctx := &check.Context{Snapshot: s}
	fs, err := c.Run(ctx)
	if err != nil {
		t.Fatalf("check %s: %v", c.ID, err)
	}
	return fs, ctx.Notes()
}
