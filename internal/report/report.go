// Package report holds the audit report (the JSON contract) and renders it
// as text or JSON. Renderers only write; exit codes are decided elsewhere.
package report

import (
	"sort"
	"strings"
	"time"

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
//
//   - Fail: the check reported findings (other rules may still be
//     incomplete: see CheckResult.Rules).
//   - Pass: every rule ran on complete input and found nothing.
//   - Partial: no finding, but some rule ran on incomplete input or was
//     skipped: absence proves nothing there.
//   - NotEvaluated: no rule had anything to work on.
const (
	Fail         Status = "fail"
	Pass         Status = "pass"
	Partial      Status = "partial"
	NotEvaluated Status = "not-evaluated"
)

// RuleStatus is how one rule of a check went.
type RuleStatus string

// Rule statuses.
const (
	// RuleEvaluated: the rule ran on complete input; its findings, or their
	// absence, are the answer.
	RuleEvaluated RuleStatus = "evaluated"
	// RulePartial: the rule ran on the objects present, but some input is
	// incomplete (files, a namespace scope, objects it could not judge), so
	// finding nothing proves nothing.
	RulePartial RuleStatus = "partial"
	// RuleSkipped: the rule could not run at all.
	RuleSkipped RuleStatus = "skipped"
)

// RuleResult is how one rule of a check went. Checks list every rule; a
// report reader sees which questions were answered and which were not.
type RuleResult struct {
	ID     string     `json:"id"`
	Status RuleStatus `json:"status"`
	// Reason says what was missing, for partial and skipped rules.
	Reason string `json:"reason,omitempty"`
	// Missing lists the inputs that would complete the rule, as coverage
	// names them ("apps/v1/deployments").
	Missing []string `json:"missing,omitempty"`
	// Category says what would complete a partial or skipped rule:
	// CategoryInput (objects, a namespace, a permission: the user can add
	// them), CategoryOptIn (a source the user did not ask for, such as
	// --inspect-images) or CategoryKnowledge (a fact kubegap does not
	// hold). Empty for an evaluated rule and in reports written before it.
	Category string `json:"category,omitempty"`
	// Noted is true when the check itself said the rule could not judge
	// some objects it had (beyond any input missing): its silence about
	// them proves nothing even where its input is complete. Kept out of
	// the JSON, which carries the reason.
	Noted bool `json:"-"`
}

// Categories of a partial or skipped rule (RuleResult.Category).
const (
	CategoryInput     = "input"
	CategoryOptIn     = "opt-in"
	CategoryKnowledge = "knowledge"
)

// Completable reports whether the user can complete the rule with input
// or permissions (what --fail-on-unknown counts by default). A rule from
// a report without categories counts as completable: unknown is never
// pass.
func (rr RuleResult) Completable() bool {
	return rr.Status != RuleEvaluated && (rr.Category == "" || rr.Category == CategoryInput)
}

// Report is the result of an audit. Its JSON form is a public contract:
// change it only by adding fields.
type Report struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Source     snapshot.Source `json:"source"`
	// TargetVersion is the --target-version of an upgrade preflight
	// ("1.35"); findings about it carry "preflight".
	TargetVersion string `json:"targetVersion,omitempty"`
	// CurrentVersion is, in a preflight, the control plane's version as
	// the input states or bounds it, and on what basis.
	CurrentVersion *CurrentVersion `json:"currentVersion,omitempty"`
	// Plan is, in a preflight, the ordered upgrade plan (see Plan); the
	// JSON and YAML writers fill it from the findings as written.
	Plan     []PlanStep          `json:"plan,omitempty"`
	Coverage []snapshot.Coverage `json:"coverage"`
	Checks   []CheckResult       `json:"checks"`
	Findings []finding.Finding   `json:"findings"`
	Summary  Summary             `json:"summary"`
	// CaseBaseURL is where each cited case has its page: CaseBaseURL + the
	// case ID. Absent when the pages are not at base + ID (the default
	// docs/cases/ID.md pages); CaseURLPattern always says where they are.
	CaseBaseURL string `json:"caseBaseURL,omitempty"`
	// CaseURLPattern is each cited case's page with "{id}" for the case ID
	// (or, with no "{id}", a base the ID is appended to); CaseURLFrom says
	// which setting chose it (--case-base-url, KUBEGAP_CASE_BASE_URL,
	// config or default).
	CaseURLPattern string `json:"caseURL,omitempty"`
	CaseURLFrom    string `json:"caseURLFrom,omitempty"`
	// MissingInputs lists what kept rules from a full answer and how to
	// complete it; empty when every rule ran on complete input.
	MissingInputs []MissingInput `json:"missingInputs,omitempty"`

	// GeneratedAt is when the audit ran (UTC). It is the only value that
	// changes between two runs over the same cluster state.
	GeneratedAt time.Time `json:"generatedAt,omitzero"`
	// Tool names the kubegap that wrote the report.
	Tool Tool `json:"tool,omitzero"`
	// Suppressed holds the findings an annotation or the config file
	// suppressed: listed, never silently dropped.
	Suppressed []Suppressed `json:"suppressed,omitempty"`
	// Baseline compares the findings with a previous report (--baseline).
	Baseline *Baseline `json:"baseline,omitempty"`
	// Warnings are things the reader should know that are not findings:
	// expired suppressions, files skipped as not Kubernetes objects.
	Warnings []string `json:"warnings,omitempty"`
	// BelowMinSeverity counts the findings --min-severity left out, so
	// that a filtered report says what it hid.
	BelowMinSeverity int `json:"belowMinSeverity,omitempty"`
	// ProviderOwnedHidden counts the provider-owned findings
	// --ignore-provider-owned left out, so the report says what it hid.
	ProviderOwnedHidden int `json:"providerOwnedHidden,omitempty"`
}

// Tool names the program that wrote a report.
type Tool struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Suppressed is a finding kept out of the findings, and why.
type Suppressed struct {
	Finding finding.Finding `json:"finding"`
	// By is "annotation" (kubegap.dev/ignore on the object) or "config"
	// (a suppressions entry of the config file).
	By     string `json:"by"`
	Reason string `json:"reason,omitempty"`
	// Object is the object whose annotation suppressed the finding.
	Object *finding.ObjectRef `json:"object,omitempty"`
	// Expires is the config entry's expiry date, if it has one.
	Expires string `json:"expires,omitempty"`
}

// Baseline is the outcome of comparing with a previous report: each current
// finding is marked new or unchanged (Finding.Baseline), and those of the
// previous report that are gone are listed as resolved.
type Baseline struct {
	File      string            `json:"file"`
	New       int               `json:"new"`
	Unchanged int               `json:"unchanged"`
	Resolved  []finding.Finding `json:"resolved"`
	// NotRechecked holds the previous findings that are gone from this
	// report only because this run did not look at their objects with the
	// rule that made them (a namespace scope, input or permissions
	// missing, the check skipped): never resolved.
	NotRechecked []NotRechecked `json:"notRechecked,omitempty"`
}

// NotRechecked is a previous finding this run did not look at again.
type NotRechecked struct {
	Finding finding.Finding `json:"finding"`
	// Why is "scope", "input", "rbac", "skipped", "not requested" or
	// "unknown to kubegap": what kept the check from looking again.
	Why string `json:"why"`
}

// CheckResult is how one check went.
type CheckResult struct {
	ID       string `json:"id"`
	Title    string `json:"title,omitempty"`
	Status   Status `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Findings int    `json:"findings,omitempty"`
	// Rules lists each rule of the check and how it went.
	Rules []RuleResult `json:"rules,omitempty"`
}

// Summary counts findings by severity.
type Summary struct {
	Critical int `json:"critical"`
	High     int `json:"high"`
	Medium   int `json:"medium"`
	Low      int `json:"low"`
	Info     int `json:"info"`
	// Suppressed counts the findings in Report.Suppressed.
	Suppressed int `json:"suppressed"`
}

// Add adds o's counts to s, as a total over several reports.
func (s *Summary) Add(o Summary) {
	s.Critical += o.Critical
	s.High += o.High
	s.Medium += o.Medium
	s.Low += o.Low
	s.Info += o.Info
	s.Suppressed += o.Suppressed
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
	r := &Report{APIVersion: APIVersion, Kind: Kind, Source: src, Coverage: cov,
		Checks: []CheckResult{}, Findings: []finding.Finding{}}
	r.SetCaseURL("", "default")
	return r
}

// Finish gives each finding its stable ID, sorts findings (most severe
// first, then by check and first object) and counts them. It may be called
// again after findings are moved or filtered.
func (r *Report) Finish() {
	r.MissingInputs = Missing(r)
	for i := range r.Findings {
		if r.Findings[i].ID == "" {
			r.Findings[i].ID = finding.StableID(r.Findings[i])
		}
	}
	for i := range r.Suppressed {
		if f := &r.Suppressed[i].Finding; f.ID == "" {
			f.ID = finding.StableID(*f)
		}
	}
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
	r.Summary = Summary{Suppressed: len(r.Suppressed)}
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

// KeepAtOrAbove drops the findings below min (--min-severity) and counts
// again. Check results keep their status: a check that found only
// low-severity gaps still failed.
func (r *Report) KeepAtOrAbove(min finding.Severity) {
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if f.Severity >= min {
			kept = append(kept, f)
		}
	}
	r.BelowMinSeverity += len(r.Findings) - len(kept)
	r.Findings = kept
	r.Finish()
}

// DropProviderOwned leaves out the findings a managed provider owns
// (--ignore-provider-owned: Owner set, internal/owner) and counts again, so
// that --fail-on judges only what the user can fix in the cluster.
func (r *Report) DropProviderOwned() {
	kept := r.Findings[:0]
	for _, f := range r.Findings {
		if f.Owner == nil {
			kept = append(kept, f)
		}
	}
	r.ProviderOwnedHidden += len(r.Findings) - len(kept)
	r.Findings = kept
	r.Finish()
}

// RepositoryURL is kubegap's home: the repository of its module path.
const RepositoryURL = "https://github.com/kubegap/kubegap"

// DefaultCaseURL is where a case's page is unless configured otherwise:
// docs/cases/ID.md of kubegap's own repository (internal/casepages), which
// exists as soon as the repository is published. "{id}" stands for the
// case ID.
const DefaultCaseURL = RepositoryURL + "/blob/main/docs/cases/{id}.md"

// CaseURLFor is the page of case id under base: base with "{id}" replaced
// by the ID, or, when base holds no "{id}", base + the ID (the pages of
// 'kubegap serve' at http://HOST/cases/ID and of 'kubegap site' at
// cases/ID/). An empty base is DefaultCaseURL.
func CaseURLFor(base, id string) string {
	if base == "" {
		base = DefaultCaseURL
	}
	if strings.Contains(base, "{id}") {
		return strings.ReplaceAll(base, "{id}", id)
	}
	return base + id
}

// CaseURL is the page of a cited case, under the report's configured base
// (a report with only caseBaseURL, as written before caseURL existed:
// that base plus the ID).
func (r *Report) CaseURL(id string) string {
	if r.CaseURLPattern == "" && r.CaseBaseURL != "" {
		return r.CaseBaseURL + id
	}
	return CaseURLFor(r.CaseURLPattern, id)
}

// SetCaseURL sets where the report's case links point (see CaseURLFor)
// and from where that setting came: "--case-base-url",
// "KUBEGAP_CASE_BASE_URL", "config" or "default".
func (r *Report) SetCaseURL(base, from string) {
	if base == "" {
		base = DefaultCaseURL
	}
	r.CaseURLPattern, r.CaseURLFrom = base, from
	r.CaseBaseURL = ""
	if !strings.Contains(base, "{id}") {
		r.CaseBaseURL = base
	} else if b, ok := strings.CutSuffix(base, "{id}"); ok && !strings.Contains(b, "{id}") {
		r.CaseBaseURL = b
	}
}

// CaseURL is the page of a library case under DefaultCaseURL.
//
// Deprecated: a renderer uses (*Report).CaseURL, which follows
// --case-base-url.
func CaseURL(id string) string { return CaseURLFor("", id) }
