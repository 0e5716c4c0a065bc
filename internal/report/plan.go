package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
)

// PlanStep is one step of the upgrade plan: a finding to fix before the
// upgrade or to watch during it, whichever check made it.
type PlanStep struct {
	Step int `json:"step"`
	// Phase is finding.PreflightBefore or finding.PreflightDuring.
	Phase       string              `json:"phase"`
	FindingID   string              `json:"findingID"`
	Check       string              `json:"check"`
	Severity    finding.Severity    `json:"severity"`
	Title       string              `json:"title"`
	Objects     []finding.ObjectRef `json:"objects"`
	Remediation string              `json:"remediation"`
	// Also are other findings about the same objects (the same gap seen
	// by another check), fixed by the same step.
	Also []PlanRef `json:"also,omitempty"`
}

// PlanRef names a finding the step also fixes.
type PlanRef struct {
	FindingID string `json:"findingID"`
	Check     string `json:"check"`
}

// CurrentVersion is what the audit knows of the control plane's version
// in an upgrade preflight: stated by the input or inferred from it.
type CurrentVersion struct {
	// Version is "1.34", a range "1.32 to 1.34", "1.34 or later",
	// "at most 1.34", or "unknown".
	Version string `json:"version"`
	// Inferred is true when the input does not state the version and
	// Version is what it proves.
	Inferred bool `json:"inferred"`
	// Basis says what the version comes from.
	Basis string `json:"basis"`
}

// upgradePhases are the checks outside the preflight whose findings (at
// medium and above) an upgrade must deal with, and when: they judge the
// cluster as it is, and what they find is as much in the way of the
// upgrade as what the preflight finds (docs/preflight.md, "Other checks").
var upgradePhases = map[string]string{
	"version-skew":           finding.PreflightBefore, // skew today only grows with the control plane
	"runtime-kubelet-compat": finding.PreflightBefore,
	"node-os-lifecycle":      finding.PreflightBefore,
	"host-binary-glibc":      finding.PreflightBefore, // nodes a host-installed binary already breaks
	"pod-sandbox-failures":   finding.PreflightBefore, // nodes that cannot start pods take no drained ones
	"removed-apis":           finding.PreflightBefore,
	"addon-version-compat":   finding.PreflightBefore,
	"pdb-blocks-drain":       finding.PreflightDuring, // every node drain waits on these
}

// Plan orders the findings of a preflight report (TargetVersion set) that
// must be fixed before or watched during the upgrade: the preflight's own
// (marked Preflight) and those of the checks in upgradePhases at medium and
// above. Fix-before steps come first, then watch-during; within each, the
// most severe first, in report order. A finding that is an earlier step's gap seen by
// another check (sameGap) is folded into that step (Also). Nil without a target.
func Plan(r *Report) []PlanStep {
	if r.TargetVersion == "" {
		return nil
	}
	type item struct {
		f     finding.Finding
		phase string
		order int
	}
	var items []item
	for i, f := range r.Findings {
		phase := f.Preflight
		if phase == "" && f.Severity >= finding.Medium {
			phase = upgradePhases[f.Check]
		}
		if phase != "" {
			items = append(items, item{f, phase, i})
		}
	}
	rank := func(p string) int {
		if p == finding.PreflightBefore {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if c := cmp.Compare(rank(a.phase), rank(b.phase)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.f.Severity, a.f.Severity); c != 0 {
			return c
		}
		// The preflight's own finding leads a fold: it speaks of the target.
		if (a.f.Preflight == "") != (b.f.Preflight == "") {
			if a.f.Preflight != "" {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.order, b.order)
	})
	var steps []PlanStep
	var leads []finding.Finding
	for _, it := range items {
		if i := slices.IndexFunc(leads, func(l finding.Finding) bool { return sameGap(l, it.f) }); i >= 0 {
			steps[i].Also = append(steps[i].Also, PlanRef{FindingID: it.f.ID, Check: it.f.Check})
			continue
		}
		leads = append(leads, it.f)
		steps = append(steps, PlanStep{
			Step: len(steps) + 1, Phase: it.phase, FindingID: it.f.ID, Check: it.f.Check, Severity: it.f.Severity,
			Title: it.f.Title, Objects: it.f.Objects, Remediation: it.f.Remediation,
		})
	}
	return steps
}

// sameGap reports whether two findings are one gap seen twice: the
// preflight's finding about the target and another check's about the
// cluster as it is, about the same first object (the one the fix changes:
// the DaemonSet, the budget) and citing a common case.
func sameGap(a, b finding.Finding) bool {
	if (a.Preflight == "") == (b.Preflight == "") {
		return false
	}
	if len(a.Objects) == 0 || len(b.Objects) == 0 || a.Objects[0] != b.Objects[0] {
		return false
	}
	return slices.ContainsFunc(a.Cases, func(c string) bool { return slices.Contains(b.Cases, c) })
}

// PlanObjects names a step's objects in one line: the first few and how
// many more.
func PlanObjects(objs []finding.ObjectRef, max int) string {
	var names []string
	for i, o := range objs {
		if i == max {
			names = append(names, Plural(len(objs)-i, "more", "more"))
			break
		}
		names = append(names, o.String())
	}
	return strings.Join(names, ", ")
}
