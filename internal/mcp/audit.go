package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/cluster"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Paging and size limits.
const (
	defaultPageSize   = 10
	maxPageSize       = 50
	defaultKeepAudits = 8
	// pageBudget bounds one audit response on the wire (the JSON-RPC
	// message, text summary and structured content together): a page holds
	// page_size findings or as many as fit, and at least one.
	pageBudget = 10 * 1024
	// pageBudgetChecks is the catalogue size pageBudget was set for (64
	// checks), and pageBudgetPerCheck what page 1 may grow by for each
	// check beyond it: page 1 names every selected check that did not pass,
	// and on a partial dump that is most of them.
	pageBudgetChecks   = 64
	pageBudgetPerCheck = 64
	// envelopeBytes is what the JSON-RPC envelope adds around a result's
	// content and structured content, with room to spare: 221 bytes
	// measured on the demo audit's page 1 (TestWireBudgets), which 200
	// once underestimated by a byte over the budget.
	envelopeBytes = 256
	// maxBriefObjects is how many objects a finding lists on a page;
	// get_finding lists them all.
	maxBriefObjects = 3
	// maxEvidenceChars bounds the one evidence line a page shows.
	maxEvidenceChars = 240
	// maxTitleChars bounds a finding's title on a page.
	maxTitleChars = 200
	// maxReasonChars bounds the reason a page gives for a check or a
	// resource; explain_check with audit_id gives it whole.
	maxReasonChars = 160
	// maxSourcePaths is how many input paths a page names.
	maxSourcePaths = 5
)

// AuditInput is what the audit tool takes. Exactly one source applies:
// files, demo, or (by default) a live cluster.
type AuditInput struct {
	Context       string   `json:"context,omitempty" jsonschema:"kube context to audit live; default: the server's --context, else the kubeconfig's current context"`
	Contexts      []string `json:"contexts,omitempty" jsonschema:"audit each of these kube contexts live (at most 8 per call, 4 read at a time, each within the server's --allow-context): the response lists each context with its own audit_id to page, its summary, or why it could not be audited (one unreachable context does not stop the others); not with context, files or demo; default: none (one context)"`
	Kubeconfig    string   `json:"kubeconfig,omitempty" jsonschema:"path of a kubeconfig file for a live audit; default: the server's --kubeconfig, else KUBECONFIG, else ~/.kube/config"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"audit only this namespace (cluster-scoped objects such as nodes are still read); checks that need other namespaces report partial, never pass; applies to live, files and demo; default: all namespaces"`
	Files         []string `json:"files,omitempty" jsonschema:"audit these YAML/JSON files or directories (kubectl get -o yaml output, List objects, multi-document, gzip, kubegap snapshots) instead of a cluster; paths on the machine running kubegap, relative ones resolved against the server's working directory; default: none (a live audit)"`
	Demo          bool     `json:"demo,omitempty" jsonschema:"true audits kubegap's embedded demo cluster, which shows the founding gaps; default: false"`
	Checks        []string `json:"checks,omitempty" jsonschema:"run only these check IDs (see list_checks), each in any case or a prefix only one ID starts with; default: all"`
	SkipChecks    []string `json:"skip_checks,omitempty" jsonschema:"skip these check IDs, each in any case or a prefix only one ID starts with; default: none"`
	MinSeverity   string   `json:"min_severity,omitempty" jsonschema:"list only findings at or above this severity: critical, high, medium, low or info; default: low"`
	PageSize      int      `json:"page_size,omitempty" jsonschema:"most findings per page, 1 to 50 (0 is an error); a page also stops before about 10 KB; default: 10"`
	Page          int      `json:"page,omitempty" jsonschema:"1-based page number; with audit_id it pages an earlier audit instead of running a new one; default: 1"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"next_cursor from an earlier audit response: returns its next page without re-running; the other arguments are then ignored"`
	TargetVersion MinorArg `json:"target_version,omitempty" jsonschema:"upgrade preflight: also judge the cluster as it will be during and after an upgrade to this Kubernetes minor, as a string such as \"1.35\" (a number such as 1.35 is taken too, but not one that may have lost a trailing zero: 1.4 for 1.40); adds the preflight checks; findings about it carry preflight before or during; default: none"`
	AuditID       string   `json:"audit_id,omitempty" jsonschema:"page an earlier audit (with page) instead of running a new one; default: run a new audit"`
	CheckDetail   bool     `json:"check_detail,omitempty" jsonschema:"true: page 1 also gives, for each check that did not pass, the resources it lacked and its reason (a larger page, past the 10 KB a page keeps to otherwise); explain_check with audit_id gives one check rule by rule; default: false"`

	// IgnoreProviderOwned is the CLI's --ignore-provider-owned.
	IgnoreProviderOwned bool `json:"ignore_provider_owned,omitempty" jsonschema:"true leaves out of a new audit the findings whose objects a managed provider (AKS, EKS, GKE, k3s) owns and reconciles, as the CLI's --ignore-provider-owned does; provider_owned_hidden counts them; default: false (they are listed, with owner set)"`
}

// AuditOutput is one page of an audit. Page 1 carries the overview
// (coverage, checks, passed); later pages carry findings only.
type AuditOutput struct {
	AuditID string          `json:"audit_id" jsonschema:"ID of this audit's report, for get_finding, explain_check and paging; the server keeps the last 8"`
	Source  snapshot.Source `json:"source" jsonschema:"what was read (at most 5 paths; paths_total counts them all); source.scope.namespaces lists the namespaces the read was limited to (absent: all)"`
	// PathsTotal counts the input paths when the page names only some.
	PathsTotal int `json:"paths_total,omitempty" jsonschema:"how many input paths there were, when source.paths lists only the first 5"`
	// Coverage says what could not be read completely: a resource that is
	// forbidden, not in the input or read only in part leaves the rules
	// that need it unknown. Resources read completely are only counted, to
	// keep the page small.
	Coverage []CoverageBrief `json:"coverage,omitempty" jsonschema:"page 1 only: each resource the audit needed that was not read completely (forbidden, error, not-in-input, or read without knowing it is all: files, a namespace scope); not-served ones are known absent and listed too"`
	// CompleteResources counts the resources read completely.
	CompleteResources int            `json:"complete_resources,omitempty" jsonschema:"page 1 only: how many of the resources the audit needed were read completely (not listed in coverage)"`
	Summary           report.Summary `json:"summary" jsonschema:"findings by severity, over the whole audit"`
	// Checks lists the checks that did not pass; Passed only names the
	// rest, so that the page stays small as the number of checks grows.
	Checks []CheckStatus `json:"checks,omitempty" jsonschema:"page 1 only: every selected check that did not pass: fail, partial or not-evaluated (with check_detail: the resources it lacked and why; explain_check with audit_id gives it rule by rule)"`
	Passed []string      `json:"passed,omitempty" jsonschema:"page 1 only: IDs of the selected checks that passed: every rule ran on complete input and found nothing"`
	// Findings is this page, most severe first.
	Findings      []FindingBrief `json:"findings"`
	TotalFindings int            `json:"total_findings" jsonschema:"findings at or above min_severity, across all pages"`
	MinSeverity   string         `json:"min_severity"`
	Page          int            `json:"page"`
	PageSize      int            `json:"page_size"`
	NextPage      int            `json:"next_page,omitempty" jsonschema:"the next page number; absent on the last page"`
	NextCursor    string         `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last page"`
	Hint          string         `json:"hint,omitempty"`

	// ProviderOwnedHidden is the report's providerOwnedHidden.
	ProviderOwnedHidden int `json:"provider_owned_hidden,omitempty" jsonschema:"with ignore_provider_owned: how many provider-owned findings the audit left out"`
	// CurrentVersion and Plan are a preflight's (target_version), page 1.
	CurrentVersion *report.CurrentVersion `json:"current_version,omitempty" jsonschema:"page 1 only, with target_version: the control plane's version as the input states it or bounds it (inferred: true), and the basis"`
	Plan           []PlanStepBrief        `json:"plan,omitempty" jsonschema:"page 1 only, with target_version: the upgrade plan, every finding of any check to fix before (phase before) or watch during (phase during) the upgrade, in order; get_finding gives each step's remediation"`

	// Contexts is a several-context audit's one row per context.
	Contexts []ContextAudit `json:"contexts,omitempty" jsonschema:"with contexts: each context's audit (audit_id, summary, checks failed and incomplete) or error; summary adds them up and findings is empty: page each context by its audit_id"`
}

// PlanStepBrief is one step of the upgrade plan.
type PlanStepBrief struct {
	Step      int      `json:"step"`
	Phase     string   `json:"phase" jsonschema:"before (fix before upgrading) or during (watch during the upgrade)"`
	FindingID string   `json:"finding_id" jsonschema:"the step's finding, for get_finding"`
	Also      []string `json:"also,omitempty" jsonschema:"finding_ids of other checks' findings about the same gap, fixed by the same step"`
	Check     string   `json:"check"`
	Severity  string   `json:"severity"`
	Title     string   `json:"title"`
	Objects   []string `json:"objects" jsonschema:"the first few objects the step changes"`
}

// CoverageBrief is how reading one resource went.
type CoverageBrief struct {
	Resource string `json:"resource"`
	Status   string `json:"status" jsonschema:"read (present but not known to be complete), not-in-input, forbidden, error or not-served"`
	Count    int    `json:"count,omitempty" jsonschema:"objects read"`
	// Checks counts the checks this resource leaves incomplete.
	Checks int `json:"checks,omitempty" jsonschema:"how many of the selected checks need this resource complete and so did not pass"`
	// Namespaces is the scope a read was limited to.
	Namespaces []string `json:"namespaces,omitempty" jsonschema:"the namespaces the read was limited to"`
	Message    string   `json:"message,omitempty" jsonschema:"for forbidden and error: what the API server said"`
}

// CheckStatus is how one check went in an audit, in brief.
type CheckStatus struct {
	ID       string   `json:"id"`
	Status   string   `json:"status" jsonschema:"fail (findings), partial (some input incomplete or unread: silence proves nothing there) or not-evaluated"`
	Missing  []string `json:"missing,omitempty" jsonschema:"with check_detail: the resources (as coverage names them) that would complete the check"`
	Reason   string   `json:"reason,omitempty" jsonschema:"with check_detail: which rules could not run on complete input and why"`
	Findings int      `json:"findings,omitempty"`
}

// FindingBrief is a finding as a page of an audit shows it.
type FindingBrief struct {
	FindingID    string   `json:"finding_id" jsonschema:"stable within the audit, e.g. F3; pass to get_finding"`
	Check        string   `json:"check"`
	Severity     string   `json:"severity"`
	Title        string   `json:"title"`
	Objects      []string `json:"objects" jsonschema:"the first few objects involved, as Kind/namespace/name (Kind/name when cluster-scoped)"`
	ObjectsTotal int      `json:"objects_total" jsonschema:"how many objects the finding names in all; get_finding lists them with apiVersion"`
	Evidence     string   `json:"evidence,omitempty" jsonschema:"the first line of evidence; get_finding has it all"`
	Cases        []string `json:"cases" jsonschema:"incident case IDs; open with get_case"`
	Preflight    string   `json:"preflight,omitempty" jsonschema:"with target_version: before (fix before upgrading) or during (watch during the upgrade)"`
	Owner        string   `json:"owner,omitempty" jsonschema:"set when a managed provider owns the objects: who, and what to ask or upgrade instead (not fixable in the cluster)"`
}

func (h *handlers) audit(ctx context.Context, req *sdk.CallToolRequest, in AuditInput) (*sdk.CallToolResult, AuditOutput, error) {
	var (
		st       *storedAudit
		minSev   = finding.Low
		pageSize = defaultPageSize
		page     = 1
		offset   = -1 // from a cursor: where its page starts
	)
	switch {
	case in.Cursor != "":
		c, err := decodeCursor(in.Cursor)
		if err != nil {
			return nil, AuditOutput{}, err
		}
		if st, err = h.audits.get(c.AuditID); err != nil {
			return nil, AuditOutput{}, err
		}
		minSev, pageSize, page, offset = c.MinSeverity, c.PageSize, c.Page, c.Offset
	default:
		var err error
		if minSev, pageSize, err = pagingArgs(in); err != nil {
			return nil, AuditOutput{}, err
		}
		page = max(in.Page, 1)
		if in.AuditID != "" {
			if st, err = h.audits.get(in.AuditID); err != nil {
				return nil, AuditOutput{}, err
			}
			break
		}
		if len(in.Contexts) > 0 {
			return h.auditContexts(ctx, req, in)
		}
		rep, err := h.runAudit(ctx, in)
		if err != nil {
			return nil, AuditOutput{}, err
		}
		st = h.audits.add(rep)
	}
	p := newPager(st, minSev, pageSize, in.CheckDetail && in.Cursor == "")
	var (
		out  AuditOutput
		text string
		err  error
	)
	if offset >= 0 {
		if offset >= len(p.shown) {
			return nil, AuditOutput{}, fmt.Errorf("cursor is past the end of audit %s (%d findings at or above %s): pass next_cursor from the previous page unchanged", st.id, len(p.shown), minSev)
		}
		out, text = p.pageFrom(offset, page)
	} else if out, text, err = p.page(page); err != nil {
		return nil, AuditOutput{}, err
	}
	return textResult(req, text), out, nil
}

// pagingArgs checks the paging arguments of a call without a cursor.
func pagingArgs(in AuditInput) (finding.Severity, int, error) {
	minSev := finding.Low
	if in.MinSeverity != "" {
		s, err := finding.ParseSeverity(in.MinSeverity)
		if err != nil {
			return 0, 0, fmt.Errorf("min_severity: %w", err)
		}
		minSev = s
	}
	pageSize := in.PageSize
	switch {
	case pageSize == 0:
		pageSize = defaultPageSize
	case pageSize < 0 || pageSize > maxPageSize:
		return 0, 0, fmt.Errorf("page_size %d is out of range: use 1 to %d (default %d) and page through the rest with next_cursor", pageSize, maxPageSize, defaultPageSize)
	}
	if in.Page < 0 {
		return 0, 0, fmt.Errorf("page %d is out of range: pages are numbered from 1", in.Page)
	}
	return minSev, pageSize, nil
}

// runAudit reads the chosen source and runs the chosen checks, exactly as
// 'kubegap audit' does.
func (h *handlers) runAudit(ctx context.Context, in AuditInput) (*report.Report, error) {
	// namespace becomes a path segment of live requests: refuse one that
	// is not a namespace name before anything is read or sent.
	if err := cluster.ValidateNamespace(in.Namespace); err != nil {
		return nil, err
	}
	target, err := audit.ParseTarget("target_version", string(in.TargetVersion))
	if err != nil {
		return nil, err
	}
	selected, err := audit.Choose(checks.All(), in.Checks, in.SkipChecks, target)
	if err != nil {
		return nil, fmt.Errorf("%w; see list_checks", err)
	}
	var snap *snapshot.Snapshot
	offline := in.Demo || len(in.Files) > 0
	switch {
	case in.Demo && len(in.Files) > 0:
		return nil, errors.New("demo and files cannot be combined: pass one of them, or neither to audit a live cluster")
	case offline && (in.Context != "" || in.Kubeconfig != ""):
		return nil, errors.New("context and kubeconfig apply to a live cluster only: drop them, or drop files/demo")
	case in.Demo:
		snap, err = demo.Snapshot()
		if err != nil {
			return nil, fmt.Errorf("loading the demo cluster: %w", err)
		}
	case len(in.Files) > 0:
		paths, err := resolveFiles(in.Files)
		if err != nil {
			return nil, err
		}
		snap, err = snapshot.LoadPaths(paths)
		if err != nil {
			return nil, fmt.Errorf("reading files: %w (files must be readable paths on the machine running kubegap)", err)
		}
	default:
		snap, err = h.readCluster(ctx, in, audit.Resources(selected))
		if err != nil {
			return nil, err
		}
	}
	// The same -n as the CLI: offline input is cut to the namespace.
	if offline && in.Namespace != "" {
		if err := snap.Restrict([]string{in.Namespace}); err != nil {
			return nil, err
		}
	}
	if err := audit.CheckScope(snap); err != nil {
		return nil, err
	}
	rep := audit.Run(snap, selected, audit.Options{Target: target})
	if in.IgnoreProviderOwned {
		rep.DropProviderOwned()
	}
	return rep, nil
}

// resolveFiles makes each relative path absolute against the server's
// working directory — which is the client's choice, not the agent's — and
// says so when a path is not there.
func resolveFiles(files []string) ([]string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, fmt.Errorf("files: the server's working directory is unknown (%v): pass absolute paths", err)
	}
	out := make([]string, len(files))
	for i, f := range files {
		if strings.TrimSpace(f) == "" {
			return nil, errors.New("files: an empty path; pass the paths of YAML/JSON files or directories")
		}
		p := f
		if !filepath.IsAbs(p) {
			p = filepath.Join(wd, p)
		}
		if _, err := os.Stat(p); err != nil {
			why := "cannot be read"
			if errors.Is(err, fs.ErrNotExist) {
				why = "does not exist"
			}
			if p == f {
				return nil, fmt.Errorf("files: %s %s on the machine running kubegap", f, why)
			}
			return nil, fmt.Errorf("files: %q %s: relative paths are resolved against the server's working directory %s, giving %s; pass an absolute path", f, why, wd, p)
		}
		out[i] = p
	}
	return out, nil
}

// shownFinding is a finding on a page with its ID, which numbers the whole
// report, not the filtered list, so a finding keeps its ID whatever
// min_severity a later page asks for.
type shownFinding struct {
	id int
	f  *finding.Finding
}

// pager cuts a stored audit into pages. A page holds at most pageSize
// findings and, on the wire, at most pageBudget bytes: the cut is
// greedy from the first page, so a page number and a cursor always name
// the same findings.
type pager struct {
	st       *storedAudit
	minSev   finding.Severity
	pageSize int
	// detail asks page 1 for each check's missing resources and reason.
	detail bool
	shown  []shownFinding
}

func newPager(st *storedAudit, minSev finding.Severity, pageSize int, detail bool) *pager {
	p := &pager{st: st, minSev: minSev, pageSize: pageSize, detail: detail}
	for i := range st.report.Findings {
		if st.report.Findings[i].Severity >= minSev {
			p.shown = append(p.shown, shownFinding{i + 1, &st.report.Findings[i]})
		}
	}
	return p
}

// page returns page n (from 1), walking the cuts from the first page.
func (p *pager) page(n int) (AuditOutput, string, error) {
	offset := 0
	for i := 1; ; i++ {
		out, text := p.pageFrom(offset, i)
		if i == n {
			return out, text, nil
		}
		if out.NextCursor == "" {
			return AuditOutput{}, "", fmt.Errorf("page %d is past the end: audit %s has %d findings at or above %s, on %d page(s)",
				n, p.st.id, len(p.shown), p.minSev, i)
		}
		offset += len(out.Findings)
	}
}

// pageFrom returns the page that starts at offset, numbered n: as many
// findings as fit, at least one.
func (p *pager) pageFrom(offset, n int) (AuditOutput, string) {
	hi := min(offset+p.pageSize, len(p.shown))
	out, text := p.build(offset, hi, n)
	if hi-offset <= 1 || wireSize(out, text) <= p.budget(offset) {
		return out, text
	}
	// The largest end that fits, by bisection: lo always fits (one
	// finding is always shown), hi never does.
	lo := offset + 1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if o, t := p.build(offset, mid, n); wireSize(o, t) <= p.budget(offset) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return p.build(offset, lo, n)
}

// budget is what the page starting at offset may cost on the wire: the
// page budget plus, when page 1 was asked for check detail, what that
// detail adds.
func (p *pager) budget(offset int) int {
	if offset != 0 {
		return pageBudget
	}
	base := PageBudget(len(p.st.report.Checks))
	if !p.detail {
		return base
	}
	extra := 0
	for _, c := range p.st.report.Checks {
		if c.Status != report.Pass {
			b, _ := json.Marshal(CheckStatus{Missing: missingOf(c), Reason: c.Reason})
			extra += len(b)
		}
	}
	return base + extra
}

// PageBudget is what page 1 of an audit of n checks may cost on the wire:
// pageBudget, plus pageBudgetPerCheck for each check beyond
// pageBudgetChecks. Later pages list findings only and keep pageBudget.
func PageBudget(n int) int {
	return pageBudget + pageBudgetPerCheck*max(0, n-pageBudgetChecks)
}

// wireSize estimates what a result costs on the wire: its structured
// content, its text as a JSON string, and the envelope.
func wireSize(out AuditOutput, text string) int {
	a, _ := json.Marshal(out)
	b, _ := json.Marshal(text)
	return len(a) + len(b) + envelopeBytes
}

// build makes the page of findings [start, end), numbered n.
func (p *pager) build(start, end, n int) (AuditOutput, string) {
	st, rep := p.st, p.st.report
	total := len(p.shown)
	start, end = min(start, total), min(end, total)
	out := AuditOutput{
		AuditID:       st.id,
		Source:        rep.Source,
		Summary:       rep.Summary,
		Findings:      []FindingBrief{},
		TotalFindings: total,
		MinSeverity:   p.minSev.String(),
		Page:          n,
		PageSize:      p.pageSize,
	}
	out.ProviderOwnedHidden = rep.ProviderOwnedHidden
	if len(out.Source.Paths) > maxSourcePaths {
		out.PathsTotal = len(out.Source.Paths)
		out.Source.Paths = out.Source.Paths[:maxSourcePaths]
	}
	if start == 0 {
		p.overview(&out)
	}
	for _, x := range p.shown[start:end] {
		out.Findings = append(out.Findings, brief(x.id, x.f))
	}
	if end < total {
		out.NextPage = n + 1
		out.NextCursor = encodeCursor(cursor{AuditID: st.id, Offset: end, PageSize: p.pageSize, MinSeverity: p.minSev, Page: n + 1})
	}
	if total > 0 {
		out.Hint = "get_finding {audit_id, finding_id} gives the message, every object, all evidence and the remediation; get_case {id} opens a cited incident"
	}
	return out, pageText(&out, start)
}

// planBrief is the report's upgrade plan with the audit's finding IDs.
func planBrief(rep *report.Report) []PlanStepBrief {
	steps := report.Plan(rep)
	if len(steps) == 0 {
		return nil
	}
	ids := map[string]string{}
	for i, f := range rep.Findings {
		ids[f.ID] = findingID(i + 1)
	}
	out := make([]PlanStepBrief, 0, len(steps))
	for _, st := range steps {
		b := PlanStepBrief{Step: st.Step, Phase: st.Phase, FindingID: ids[st.FindingID], Check: st.Check, Severity: st.Severity.String(), Title: st.Title}
		for _, a := range st.Also {
			b.Also = append(b.Also, ids[a.FindingID])
		}
		for i, o := range st.Objects {
			if i == 3 {
				break
			}
			b.Objects = append(b.Objects, o.String())
		}
		out = append(out, b)
	}
	return out
}

// overview fills what only page 1 carries: coverage and check statuses.
// Each resource says how many checks it held back; which ones, and why,
// is check_detail's or explain_check's to say, so that the page stays
// small whatever the input lacks.
func (p *pager) overview(out *AuditOutput) {
	rep := p.st.report
	out.CurrentVersion, out.Plan = rep.CurrentVersion, planBrief(rep)
	out.Checks, out.Passed, out.Coverage = []CheckStatus{}, []string{}, []CoverageBrief{}
	heldBack := map[string]int{}
	for _, c := range rep.Checks {
		if c.Status == report.Pass {
			out.Passed = append(out.Passed, c.ID)
			continue
		}
		missing := missingOf(c)
		for _, m := range missing {
			heldBack[m]++
		}
		cs := CheckStatus{ID: c.ID, Status: string(c.Status), Findings: c.Findings}
		if p.detail {
			cs.Missing, cs.Reason = missing, c.Reason
		}
		out.Checks = append(out.Checks, cs)
	}
	for _, c := range rep.Coverage {
		if c.Complete && c.Status == snapshot.StatusRead && len(c.Namespaces) == 0 {
			out.CompleteResources++
			continue
		}
		cb := CoverageBrief{Resource: c.Resource, Status: string(c.Status), Count: c.Count, Namespaces: c.Namespaces, Checks: heldBack[c.Resource]}
		if c.Status == snapshot.StatusForbidden || c.Status == snapshot.StatusError {
			cb.Message = firstLine(c.Message, maxReasonChars)
		}
		out.Coverage = append(out.Coverage, cb)
	}
}

// missingOf lists, once each in rule order, the inputs the check's rules
// lacked.
func missingOf(c report.CheckResult) []string {
	var out []string
	for _, r := range c.Rules {
		for _, m := range r.Missing {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// pageText is the page in a few lines of text, the form a client that
// shows the model only a result's text content reads: the counts, one line
// per finding with the IDs to pass on, and where to go next. The page in
// full is the structured content.
func pageText(out *AuditOutput, start int) string {
	var b strings.Builder
	s := out.Summary
	fmt.Fprintf(&b, "kubegap audit %s of %s: %d findings at or above %s (critical %d, high %d, medium %d, low %d, info %d).\n",
		out.AuditID, describeSource(out.Source, out.PathsTotal), out.TotalFindings, out.MinSeverity, s.Critical, s.High, s.Medium, s.Low, s.Info)
	if start == 0 {
		counts := map[string]int{}
		for _, c := range out.Checks {
			counts[c.Status]++
		}
		fmt.Fprintf(&b, "Checks: %d fail, %d partial, %d not-evaluated, %d pass; %d resources not read completely (coverage), %d complete. Partial and not-evaluated checks proved nothing; explain_check {id, audit_id} says why.\n",
			counts[string(report.Fail)], counts[string(report.Partial)], counts[string(report.NotEvaluated)], len(out.Passed), len(out.Coverage), out.CompleteResources)
		if cv := out.CurrentVersion; cv != nil {
			how := "stated"
			if cv.Inferred {
				how = "inferred"
			}
			var steps []string
			for _, st := range out.Plan {
				steps = append(steps, fmt.Sprintf("%d %s %s", st.Step, st.Phase, st.FindingID))
			}
			fmt.Fprintf(&b, "Upgrade preflight: current version %s (%s). Plan (structured content, plan): %d steps: %s.\n",
				cv.Version, how, len(out.Plan), strings.Join(steps, "; "))
		}
	}
	for _, f := range out.Findings {
		fmt.Fprintf(&b, "%s %s %s: %s (%d objects)\n", f.FindingID, f.Severity, f.Check, f.Title, f.ObjectsTotal)
	}
	if len(out.Findings) > 0 {
		fmt.Fprintf(&b, "Page %d: findings %d-%d of %d.", out.Page, start+1, start+len(out.Findings), out.TotalFindings)
		if out.NextCursor != "" {
			fmt.Fprintf(&b, " Next: audit {cursor: %q}.", out.NextCursor)
		}
		b.WriteString(" get_finding {audit_id, finding_id} gives evidence and remediation.\n")
	}
	b.WriteString("The structured content holds this page in full.")
	return b.String()
}

// describeSource names what was read, in a few words.
func describeSource(src snapshot.Source, pathsTotal int) string {
	switch src.Type {
	case snapshot.SourceDemo:
		return "the demo cluster"
	case snapshot.SourceCluster:
		return fmt.Sprintf("context %q", src.Context)
	}
	n := max(pathsTotal, len(src.Paths))
	if n == 0 {
		return string(src.Type)
	}
	if n == 1 {
		return string(src.Type) + " " + src.Paths[0]
	}
	return fmt.Sprintf("%s (%d paths)", src.Type, n)
}

func brief(id int, f *finding.Finding) FindingBrief {
	b := FindingBrief{
		FindingID:    findingID(id),
		Check:        f.Check,
		Severity:     f.Severity.String(),
		Title:        firstLine(f.Title, maxTitleChars),
		Objects:      []string{},
		ObjectsTotal: len(f.Objects),
		Cases:        nonNil(f.Cases),
		Preflight:    f.Preflight,
	}
	if f.Owner != nil {
		b.Owner = f.Owner.Sentence()
	}
	// One string per object keeps a page small; get_finding has the
	// structured references.
	b.Objects = present.ObjectNames(f.Objects, maxBriefObjects)
	if len(f.Evidence) > 0 {
		b.Evidence = firstLine(f.Evidence[0], maxEvidenceChars)
	}
	return b
}

// firstLine returns s up to its first newline, cut to at most n bytes on a
// rune boundary, with an ellipsis when anything was dropped.
func firstLine(s string, n int) string {
	line, _, cut := strings.Cut(s, "\n")
	if len(line) > n {
		i := n
		for i > 0 && !utf8RuneStart(line[i]) {
			i--
		}
		line, cut = line[:i], true
	}
	if cut {
		line = strings.TrimRight(line, " ") + " …"
	}
	return line
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func findingID(n int) string { return "F" + strconv.Itoa(n) }

// parseFindingID reads "F3", "f3" or "3".
func parseFindingID(s string) (int, bool) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "F"), "f")
	n, err := strconv.Atoi(t)
	return n, err == nil && n > 0
}

// cursor is where the next page of an audit starts. It travels to the
// agent as opaque base64 so that agents pass it back rather than edit it.
type cursor struct {
	AuditID     string           `json:"a"`
	Offset      int              `json:"o"`
	PageSize    int              `json:"n"`
	MinSeverity finding.Severity `json:"s"`
	// Page is the number of the page the cursor starts.
	Page int `json:"p"`
}

func encodeCursor(c cursor) string {
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, error) {
	bad := fmt.Errorf("cursor %q is not one this server issued: pass next_cursor from the previous audit response unchanged, or use audit_id with page", firstLine(s, 40))
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.AuditID == "" || c.Offset < 0 || c.PageSize < 1 || c.PageSize > maxPageSize || c.Page < 2 {
		return cursor{}, bad
	}
	return c, nil
}

// storedAudit is one audit's report kept for paging and get_finding.
type storedAudit struct {
	id     string
	report *report.Report
}

// auditStore keeps the last few audits of one server. IDs carry a random
// per-server tag so that an ID from before a restart is refused rather than
// silently naming a different audit.
type auditStore struct {
	mu    sync.Mutex
	keep  int
	seq   int
	tag   string
	items []*storedAudit
}

func newAuditStore(keep int) *auditStore {
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		b = []byte{0, 0, 0}
	}
	return &auditStore{keep: keep, tag: hex.EncodeToString(b)}
}

func (s *auditStore) add(r *report.Report) *storedAudit {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	st := &storedAudit{id: fmt.Sprintf("A%d-%s", s.seq, s.tag), report: r}
	s.items = append(s.items, st)
	if len(s.items) > s.keep {
		s.items = append([]*storedAudit(nil), s.items[len(s.items)-s.keep:]...)
	}
	return st
}

func (s *auditStore) get(id string) (*storedAudit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var held []string
	for _, st := range s.items {
		if st.id == id {
			return st, nil
		}
		held = append(held, st.id)
	}
	if len(held) == 0 {
		return nil, fmt.Errorf("unknown audit_id %q: this server holds no audits (it keeps the last %d in memory, and a restart forgets them); call audit first", id, s.keep)
	}
	return nil, fmt.Errorf("unknown audit_id %q: this server holds %s (the last %d audits; older ones and those from before a restart are gone); call audit again",
		id, strings.Join(held, ", "), s.keep)
}
