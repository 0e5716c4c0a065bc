// Package baseline compares an audit with a previous report (--baseline):
// each finding becomes new or unchanged, and the previous findings that are
// gone are listed as resolved. Findings are matched by their stable ID.
package baseline

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

// Finding states after a comparison.
const (
	New       = "new"
	Unchanged = "unchanged"
)

// Load reads a previous JSON report. Findings written without an ID (by a
// kubegap before IDs) get the one they would have had.
func Load(path string) ([]finding.Finding, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var prev struct {
		Kind       string            `json:"kind"`
		Findings   []finding.Finding `json:"findings"`
		Suppressed []struct {
			Finding finding.Finding `json:"finding"`
		} `json:"suppressed"`
	}
	if err := json.Unmarshal(b, &prev); err != nil {
		return nil, fmt.Errorf("%s: not a kubegap JSON report: %w", path, err)
	}
	if prev.Kind != report.Kind {
		return nil, fmt.Errorf("%s: not a kubegap JSON report (kind %q, want %s)", path, prev.Kind, report.Kind)
	}
	// A finding suppressed then is still known then: counting it new now
	// would fail --fail-on-new when its suppression expires.
	all := prev.Findings
	for _, s := range prev.Suppressed {
		all = append(all, s.Finding)
	}
	for i := range all {
		if all[i].ID == "" {
			all[i].ID = finding.StableID(all[i])
		}
	}
	return all, nil
}

// Compare marks rep's findings new or unchanged against prev and records
// the resolved ones.
func Compare(rep *report.Report, file string, prev []finding.Finding) {
	before := map[string]bool{}
	for _, f := range prev {
		before[f.ID] = true
	}
	now := map[string]bool{}
	b := &report.Baseline{File: file, Resolved: []finding.Finding{}}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		now[f.ID] = true
		if before[f.ID] {
			f.Baseline = Unchanged
			b.Unchanged++
		} else {
			f.Baseline = New
			b.New++
		}
	}
	for _, s := range rep.Suppressed {
		now[s.Finding.ID] = true
	}
	seen := map[string]bool{}
	for _, f := range prev {
		if !now[f.ID] && !seen[f.ID] {
			seen[f.ID] = true
			f.Baseline = ""
			b.Resolved = append(b.Resolved, f)
		}
	}
	rep.Baseline = b
}

// NewAtOrAbove reports whether a new finding is at or above sev
// (--fail-on-new).
func NewAtOrAbove(rep *report.Report, sev finding.Severity) bool {
	for _, f := range rep.Findings {
		if f.Baseline == New && f.Severity >= sev {
			return true
		}
	}
	return false
}
