// Package report holds the audit report (the JSON contract) and renders it
// as text or JSON. Renderers only write; exit codes are decided elsewhere.
package report

import (
	"sort"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// APIVersion and Kind of the JSON report (contract).
const (
	APIVersion = "kubegap.dev/v1alpha1"
	Kind       = "AuditReport"
)

// Status of one check in a report.
type Status string

// Check statuses. A check whose inputs could not be read is never Pass.
const (
	Fail         Status = "fail"
	Pass         Status = "pass"
	NotEvaluated Status = "not-evaluated"
)

// Report is the result of an audit. Its JSON form is a public contract:
// change it only by adding fields.
type Report struct {
	APIVersion string              `json:"apiVersion"`
	Kind       string              `json:"kind"`
	Source     snapshot.Source     `json:"source"`
	Coverage   []snapshot.Coverage `json:"coverage"`
	Checks     []CheckResult       `json:"checks"`
	Findings   []finding.Finding   `json:"findings"`
	Summary    Summary             `json:"summary"`
}

// CheckResult is how one check went.
type CheckResult struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Status   Status `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Findings int    `json:"findings,omitempty"`
}

// Summary counts findings by severity.
type Summary struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
	Info     int `json:"info"`
}

// Count returns the number of findings of one severity.
func (s Summary) Count(sev finding.Severity) int {
	switch sev {
	case finding.Critical:
		return s.Critical
	case finding.High:
		return s.High
	case finding.Medium:
		return s.Medium
	case finding.Low:
		return s.Low
	}
	return s.Info
}

// New starts a report over a source and its coverage.
func New(src snapshot.Source, cov []snapshot.Coverage) *Report {
	if cov == nil {
		cov = []snapshot.Coverage{}
	}
	return &Report{APIVersion: APIVersion, Kind: Kind, Source: src, Coverage: cov,
		Checks: []CheckResult{}, Findings: []finding.Finding{}}
}

// Finish sorts findings (most severe first, then by check and first object)
// and counts them.
func (r *Report) Finish() {
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		if a.Check != b.Check {
			return a.Check < b.Check
		}
		return firstObject(a) < firstObject(b)
	})
	r.Summary = Summary{}
	for _, f := range r.Findings {
		switch f.Severity {
		case finding.Critical:
			r.Summary.Critical++
		case finding.High:
			r.Summary.High++
		case finding.Medium:
			r.Summary.Medium++
		case finding.Low:
			r.Summary.Low++
		default:
			r.Summary.Info++
		}
	}
}

func firstObject(f finding.Finding) string {
	if len(f.Objects) == 0 {
		return ""
	}
	return f.Objects[0].String()
}

// AtOrAbove reports whether any finding is at or above sev.
func (r *Report) AtOrAbove(sev finding.Severity) bool {
	for _, f := range r.Findings {
		if f.Severity >= sev {
			return true
		}
	}
	return false
}
