package report

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// SourceText names what a report read: "cluster prod (server v1.35.4)".
func SourceText(src snapshot.Source) string {
	s := string(src.Type)
	switch {
	case src.Context != "":
		s += " " + src.Context
	case len(src.Paths) > 0:
		s += " " + strings.Join(src.Paths, ", ")
	}
	if src.ServerVersion != "" {
		s += " (server " + src.ServerVersion + ")"
	}
	return s
}

// CheckCounts is "9 checks: 5 failed, 3 passed, 1 not evaluated".
func CheckCounts(r *Report) string {
	counts := map[Status]int{}
	for _, c := range r.Checks {
		counts[c.Status]++
	}
	s := fmt.Sprintf("%s: %d failed, %d passed", Plural(len(r.Checks), "check", "checks"), counts[Fail], counts[Pass])
	if counts[Partial] > 0 {
		s += fmt.Sprintf(", %d partial", counts[Partial])
	}
	return s + fmt.Sprintf(", %d not evaluated", counts[NotEvaluated])
}

// FindingCounts is "4 findings: 1 critical, 3 high, ..., 1 suppressed".
func FindingCounts(r *Report) string {
	var parts []string
	for _, sev := range finding.Severities() {
		parts = append(parts, fmt.Sprintf("%d %s", r.Summary.Count(sev), sev))
	}
	s := Plural(len(r.Findings), "finding", "findings") + ": " + strings.Join(parts, ", ")
	if r.Summary.Suppressed > 0 {
		s += fmt.Sprintf("; %d suppressed", r.Summary.Suppressed)
	}
	if r.BelowMinSeverity > 0 {
		s += fmt.Sprintf("; %d below --min-severity not shown", r.BelowMinSeverity)
	}
	if r.ProviderOwnedHidden > 0 {
		s += fmt.Sprintf("; %d provider-owned not shown (--ignore-provider-owned)", r.ProviderOwnedHidden)
	}
	if r.Baseline != nil {
		s += fmt.Sprintf("; %d new, %d unchanged, %d resolved since %s",
			r.Baseline.New, r.Baseline.Unchanged, len(r.Baseline.Resolved), r.Baseline.File)
		if n := len(r.Baseline.NotRechecked); n > 0 {
			s += fmt.Sprintf(", %d not re-checked", n)
		}
	}
	return s
}

// Plural is "1 node" or "3 nodes".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
