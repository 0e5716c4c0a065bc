package mcp

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/images"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/rbacgen"
	"github.com/kubegap/kubegap/internal/report"
)

// Library paging limits for search_cases.
const (
	defaultCaseLimit = 10
	maxCaseLimit     = 50
	// maxSummaryChars bounds a case summary in search results.
	maxSummaryChars = 300
)

// GetFindingInput names one finding of a kept audit.
type GetFindingInput struct {
	AuditID   string `json:"audit_id" jsonschema:"audit_id from an audit response"`
	FindingID string `json:"finding_id" jsonschema:"finding_id from an audit page, e.g. F3"`
}

// FindingDetail is a finding in full.
type FindingDetail struct {
	AuditID     string              `json:"audit_id"`
	FindingID   string              `json:"finding_id"`
	ID          string              `json:"id" jsonschema:"the finding's stable ID (kg-…): the same in every audit while the gap and its objects stay; what the report, baselines and suppressions use"`
	Check       string              `json:"check"`
	Severity    string              `json:"severity"`
	Title       string              `json:"title"`
	Message     string              `json:"message"`
	Objects     []finding.ObjectRef `json:"objects"`
	Evidence    []string            `json:"evidence"`
	Remediation string              `json:"remediation" jsonschema:"what to change; propose it to a human, do not apply it"`
	Cases       []CaseRef           `json:"cases"`
	Owner       *finding.Owner      `json:"owner,omitempty" jsonschema:"set when every object the finding asks to change is one a managed provider (AKS, EKS, GKE, k3s) owns and reconciles: not fixable in the cluster; advice says what to ask or upgrade instead"`
}

// CaseRef names a library case, with its title.
type CaseRef = check.CaseRef

func (h *handlers) getFinding(_ context.Context, req *sdk.CallToolRequest, in GetFindingInput) (*sdk.CallToolResult, FindingDetail, error) {
	st, err := h.audits.get(in.AuditID)
	if err != nil {
		return nil, FindingDetail{}, err
	}
	n, ok := parseFindingID(in.FindingID)
	if !ok || n > len(st.report.Findings) {
		valid := "it has no findings"
		if k := len(st.report.Findings); k > 0 {
			valid = fmt.Sprintf("valid IDs are F1 to F%d", k)
		}
		return nil, FindingDetail{}, fmt.Errorf("unknown finding_id %q in audit %s: %s", in.FindingID, st.id, valid)
	}
	f := st.report.Findings[n-1]
	lib, _ := library.Default()
	out := FindingDetail{
		AuditID:     st.id,
		FindingID:   findingID(n),
		ID:          f.ID,
		Check:       f.Check,
		Severity:    f.Severity.String(),
		Title:       f.Title,
		Message:     f.Message,
		Objects:     nonNil(f.Objects),
		Evidence:    nonNil(f.Evidence),
		Remediation: f.Remediation,
		Cases:       findingCaseRefs(lib, &f),
		Owner:       f.Owner,
	}
	return textResult(req, findingText(&out)), out, nil
}

// findingText is a finding as text: what a client that shows the model
// only text needs to explain it and propose the fix.
func findingText(f *FindingDetail) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) %s %s: %s\n%s\n", f.FindingID, f.ID, f.Severity, f.Check, f.Title, f.Message)
	b.WriteString("Objects: " + strings.Join(present.ObjectNames(f.Objects, 0), ", ") + "\n")
	for _, e := range f.Evidence {
		b.WriteString("Evidence: " + e + "\n")
	}
	if f.Owner != nil {
		b.WriteString("Owner: " + f.Owner.Sentence() + "\n")
	}
	b.WriteString("Remediation (for a human to apply): " + f.Remediation + "\n")
	var cases []string
	for _, c := range f.Cases {
		if c.Relation != "" {
			cases = append(cases, c.ID+" ("+c.Relation.Phrase()+" it)")
			continue
		}
		cases = append(cases, c.ID)
	}
	b.WriteString("Cases (get_case): " + strings.Join(cases, ", "))
	return b.String()
}

// caseRefs looks up case titles. A library that fails to load still
// yields the IDs: the citation matters more than its title.
func caseRefs(lib *library.Library, ids []string) []CaseRef {
	return present.CaseRefs(lib, ids)
}

// findingCaseRefs is caseRefs for f's cases, with how f's check relates
// to each.
func findingCaseRefs(lib *library.Library, f *finding.Finding) []CaseRef {
	refs := caseRefs(lib, f.Cases)
	for i := range refs {
		refs[i].Relation = f.RelationTo(refs[i].ID)
	}
	return refs
}

// ListChecksInput takes nothing.
type ListChecksInput struct{}

// ListChecksOutput lists every check, briefly; explain_check has the
// rest.
type ListChecksOutput struct {
	Checks []CheckBrief `json:"checks"`
}

// CheckBrief is a check as list_checks shows it.
type CheckBrief struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Severity string   `json:"severity" jsonschema:"the highest severity the check reports"`
	Cases    []string `json:"cases" jsonschema:"IDs of the incident cases it cites; get_case opens one"`
}

// CheckInfo describes a check, as 'kubegap checks show -o json' does.
type CheckInfo = check.Info

// CheckRead is one resource a check reads.
type CheckRead = check.InputInfo

func describeCheck(lib *library.Library, c check.Check) CheckInfo {
	return check.Describe(c, present.CaseTitle(lib))
}

func (h *handlers) listChecks(_ context.Context, req *sdk.CallToolRequest, _ ListChecksInput) (*sdk.CallToolResult, ListChecksOutput, error) {
	out := ListChecksOutput{Checks: []CheckBrief{}}
	for _, c := range checks.All() {
		out.Checks = append(out.Checks, CheckBrief{ID: c.ID, Title: c.Title, Severity: c.Severity.String(), Cases: nonNil(c.CaseIDs())})
	}
	// The titles are in the structured content; the text names the IDs.
	text := fmt.Sprintf("%d checks: %s.\nThe structured content gives each one's title, highest severity and cited cases; explain_check {id} tells what one looks for and what it reads.",
		len(out.Checks), strings.Join(checkIDs(), ", "))
	return textResult(req, text), out, nil
}

// CheckIDInput names a check, and optionally an audit to say how it went
// there.
type CheckIDInput struct {
	ID      string `json:"id" jsonschema:"check ID as list_checks gives it; case-insensitive, and a prefix only one check ID starts with is enough"`
	AuditID string `json:"audit_id,omitempty" jsonschema:"an audit_id: also say how the check went in that audit, rule by rule (status, reason, the missing resources); default: none"`
}

// ExplainCheckOutput is a check described, with how it went in an audit
// when one was named.
type ExplainCheckOutput struct {
	CheckInfo
	RBAC   string        `json:"rbac" jsonschema:"the least-privilege ClusterRole this check needs, as YAML for kubectl apply; the CLI's 'kubegap rbac --checks ID' prints the same"`
	Result *CheckOutcome `json:"result,omitempty" jsonschema:"with audit_id: how the check went in that audit"`
}

// CheckOutcome is how one check went in one audit, rule by rule.
type CheckOutcome struct {
	AuditID    string              `json:"audit_id"`
	Status     string              `json:"status" jsonschema:"pass, fail, partial, not-evaluated, or not-run when the audit did not select the check"`
	Reason     string              `json:"reason,omitempty"`
	Findings   []string            `json:"findings" jsonschema:"finding_ids of its findings in that audit, for get_finding"`
	Rules      []report.RuleResult `json:"rules" jsonschema:"each rule: evaluated, partial or skipped, why, and the resources that would complete it"`
	Unselected bool                `json:"unselected,omitempty" jsonschema:"true when the audit did not run this check (checks, skip_checks or no target_version)"`
}

func (h *handlers) explainCheck(_ context.Context, req *sdk.CallToolRequest, in CheckIDInput) (*sdk.CallToolResult, ExplainCheckOutput, error) {
	c, err := findCheck(in.ID)
	if err != nil {
		return nil, ExplainCheckOutput{}, err
	}
	lib, _ := library.Default()
	out := ExplainCheckOutput{CheckInfo: describeCheck(lib, c), RBAC: rbacgen.YAML(audit.Resources([]check.Check{c}), rbacgen.Options{})}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n%s\n", c.ID, c.Severity, c.Title, out.Description)
	for _, r := range out.Rules {
		fmt.Fprintf(&b, "Rule %s: %s (needs %s)\n", r.ID, r.Summary, strings.Join(r.Needs, ", "))
	}
	fmt.Fprintf(&b, "Access: the rbac field holds the ClusterRole it needs (kubegap rbac --checks %s prints it).\n", c.ID)
	if in.AuditID != "" {
		st, err := h.audits.get(in.AuditID)
		if err != nil {
			return nil, ExplainCheckOutput{}, err
		}
		out.Result = outcome(st, c.ID)
		fmt.Fprintf(&b, "In audit %s: %s", st.id, out.Result.Status)
		if out.Result.Reason != "" {
			b.WriteString(": " + out.Result.Reason)
		}
		if len(out.Result.Findings) > 0 {
			b.WriteString("; findings " + strings.Join(out.Result.Findings, ", "))
		}
		b.WriteString("\n")
	}
	b.WriteString("The structured content also lists what each rule reads and the cases it cites.")
	return textResult(req, b.String()), out, nil
}

// outcome is how check id went in a stored audit.
func outcome(st *storedAudit, id string) *CheckOutcome {
	o := &CheckOutcome{AuditID: st.id, Status: "not-run", Findings: []string{}, Rules: []report.RuleResult{}, Unselected: true}
	for _, c := range st.report.Checks {
		if c.ID != id {
			continue
		}
		o.Status, o.Reason, o.Rules, o.Unselected = string(c.Status), c.Reason, nonNil(c.Rules), false
	}
	for i, f := range st.report.Findings {
		if f.Check == id {
			o.Findings = append(o.Findings, findingID(i+1))
		}
	}
	return o
}

// findCheck finds a check as the CLI does: its ID in any case, or a prefix
// only one ID starts with.
func findCheck(id string) (check.Check, error) {
	c, candidates, ok := checks.Find(id)
	switch {
	case ok:
		return c, nil
	case len(candidates) > 0:
		return check.Check{}, fmt.Errorf("check %q is ambiguous: it starts %s; pass more of the ID", id, strings.Join(candidates, ", "))
	}
	return check.Check{}, fmt.Errorf("unknown check %q: valid IDs are %s", id, strings.Join(checkIDs(), ", "))
}

func checkIDs() []string {
	var ids []string
	for _, c := range checks.All() {
		ids = append(ids, c.ID)
	}
	return ids
}

// SearchCasesInput is a library query.
type SearchCasesInput struct {
	RootCause []string `json:"root_cause,omitempty" jsonschema:"root-cause facet values (OR); facets in the response list the valid ones"`
	Component []string `json:"component,omitempty" jsonschema:"component facet values (OR)"`
	Symptom   []string `json:"symptom,omitempty" jsonschema:"symptom facet values (OR)"`
	Factor    []string `json:"factor,omitempty" jsonschema:"contributing-factor facet values (OR)"`
	Search    string   `json:"search,omitempty" jsonschema:"words that must all appear in a case (case-insensitive); matches in titles rank first"`
	Limit     int      `json:"limit,omitempty" jsonschema:"cases per page, 1 to 50; default 10"`
	Offset    int      `json:"offset,omitempty" jsonschema:"matching cases to skip, for paging"`
}

// SearchCasesOutput is a page of matching cases with facet counts.
type SearchCasesOutput struct {
	Total      int          `json:"total" jsonschema:"matching cases across all pages"`
	Offset     int          `json:"offset"`
	Limit      int          `json:"limit"`
	NextOffset int          `json:"next_offset,omitempty" jsonschema:"offset of the next page; absent on the last"`
	Cases      []CaseBrief  `json:"cases"`
	Facets     []FacetCount `json:"facets" jsonschema:"for each facet, the values carried by matching cases with their counts (selected values always listed)"`
}

// CaseBrief is a case as search results show it.
type CaseBrief struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	Date    string `json:"date"`
	Summary string `json:"summary"`
}

// FacetCount is one facet's values under the current filter.
type FacetCount struct {
	Name   string       `json:"name" jsonschema:"rootCause, component, symptom or factor"`
	Values []FacetValue `json:"values"`
}

// FacetValue is a facet value with the number of matching cases.
type FacetValue struct {
	ID       string `json:"id"`
	Count    int    `json:"count"`
	Selected bool   `json:"selected,omitempty"`
}

func (h *handlers) searchCases(_ context.Context, req *sdk.CallToolRequest, in SearchCasesInput) (*sdk.CallToolResult, SearchCasesOutput, error) {
	limit := in.Limit
	switch {
	case limit == 0:
		limit = defaultCaseLimit
	case limit < 0 || limit > maxCaseLimit:
		return nil, SearchCasesOutput{}, fmt.Errorf("limit %d is out of range: use 1 to %d (default %d) and page with offset", limit, maxCaseLimit, defaultCaseLimit)
	}
	if in.Offset < 0 {
		return nil, SearchCasesOutput{}, fmt.Errorf("offset %d is negative: use 0 or more", in.Offset)
	}
	lib, err := library.Default()
	if err != nil {
		return nil, SearchCasesOutput{}, fmt.Errorf("loading the incident library: %w", err)
	}
	res, err := lib.Query(library.Query{
		RootCauses: in.RootCause, Components: in.Component, Symptoms: in.Symptom, Factors: in.Factor,
		Search: in.Search, Limit: limit, Offset: in.Offset,
	})
	if err != nil {
		// The library names the facet with its camel-case name; the tool's
		// argument is what the agent typed.
		msg := strings.NewReplacer("unknown rootCause", "unknown root_cause", "(valid:", "(valid values:").Replace(err.Error())
		return nil, SearchCasesOutput{}, fmt.Errorf("%s", msg)
	}
	out := SearchCasesOutput{Total: res.Total, Offset: res.Offset, Limit: limit, Cases: []CaseBrief{}, Facets: []FacetCount{}}
	for _, c := range res.Cases {
		out.Cases = append(out.Cases, CaseBrief{ID: c.ID, Title: c.Title, Date: c.Date, Summary: firstLine(strings.Join(strings.Fields(c.Summary), " "), maxSummaryChars)})
	}
	if next := in.Offset + len(res.Cases); len(res.Cases) > 0 && next < res.Total {
		out.NextOffset = next
	}
	for _, f := range res.Facets {
		fc := FacetCount{Name: f.Name, Values: []FacetValue{}}
		for _, v := range f.Values {
			if v.Count > 0 || v.Selected {
				fc.Values = append(fc.Values, FacetValue{ID: v.ID, Count: v.Count, Selected: v.Selected})
			}
		}
		out.Facets = append(out.Facets, fc)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d matching cases; %d from offset %d:\n", out.Total, len(out.Cases), out.Offset)
	for _, c := range out.Cases {
		fmt.Fprintf(&b, "%s (%s): %s\n", c.ID, c.Date, c.Title)
	}
	if out.NextOffset > 0 {
		fmt.Fprintf(&b, "Next page: offset %d. ", out.NextOffset)
	}
	b.WriteString("get_case {id} opens one; the structured content adds each summary and the facet counts to narrow by.")
	return textResult(req, b.String()), out, nil
}

// CaseIDInput names a case.
type CaseIDInput struct {
	ID string `json:"id" jsonschema:"case ID, e.g. azure-cni-v2-glibc (from a finding's cases or search_cases); case-insensitive, and a prefix only one case ID starts with is enough"`
}

// CaseOutput is a whole case plus the checks that detect it.
type CaseOutput struct {
	library.Case
	DetectedBy []CheckRef `json:"detected_by" jsonschema:"kubegap checks that look for this case's gap; empty when none does yet"`
}

// CheckRef names a check.
type CheckRef = present.CheckRef

func (h *handlers) getCase(_ context.Context, req *sdk.CallToolRequest, in CaseIDInput) (*sdk.CallToolResult, CaseOutput, error) {
	lib, err := library.Default()
	if err != nil {
		return nil, CaseOutput{}, fmt.Errorf("loading the incident library: %w", err)
	}
	c, candidates, ok := lib.Find(in.ID)
	switch {
	case !ok && len(candidates) > 0:
		return nil, CaseOutput{}, fmt.Errorf("case %q is ambiguous: it starts %s; pass more of the ID", in.ID, strings.Join(candidates, ", "))
	case !ok:
		return nil, CaseOutput{}, fmt.Errorf("unknown case %q: case IDs come from a finding's cases or from search_cases (the library holds %d cases)", in.ID, len(lib.Cases()))
	}
	tax := lib.Taxonomy()
	pc := present.NewCase(&c, &tax, checks.All())
	out := CaseOutput{Case: c, DetectedBy: nonNil(pc.Checks)}
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s): %s\n%s\nTrigger: %s\nRoot cause: %s\n", c.ID, c.Date, c.Title, strings.Join(strings.Fields(c.Summary), " "), c.Trigger, c.RootCause.Text)
	for _, r := range c.Remediation {
		b.WriteString("Remediation: " + r + "\n")
	}
	for _, src := range c.Sources {
		b.WriteString("Source: " + src.URL + "\n")
	}
	b.WriteString("The structured content has the case in full: symptoms, contributing factors, detection, lessons, and the checks that detect it.")
	return textResult(req, b.String()), out, nil
}

// InspectImageInput names an image in a registry.
type InspectImageInput struct {
	Reference string `json:"reference" jsonschema:"image reference, e.g. mcr.microsoft.com/containernetworking/azure-cni:v1.7.16-0"`
	Platform  string `json:"platform,omitempty" jsonschema:"os/arch[/variant] to pick from a multi-platform image; default linux/amd64"`
}

func (h *handlers) inspectImage(ctx context.Context, req *sdk.CallToolRequest, in InspectImageInput) (*sdk.CallToolResult, *images.Report, error) {
	if strings.TrimSpace(in.Reference) == "" {
		return nil, nil, fmt.Errorf("reference is empty: pass an image reference such as registry.k8s.io/pause:3.10")
	}
	platform := in.Platform
	if platform == "" {
		platform = images.DefaultPlatform
	}
	r, err := images.InspectReference(ctx, in.Reference, platform, h.opts.Images)
	if err != nil {
		return nil, nil, fmt.Errorf("inspecting %s (%s): %w", in.Reference, platform, err)
	}
	return textResult(req, fmt.Sprintf("Inspected %s (%s); the structured content lists its ELF executables and what each needs.", in.Reference, platform)), r, nil
}

// nonNil returns s, or an empty slice for nil, so JSON says [] not null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
