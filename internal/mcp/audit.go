package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Paging and size limits. A page of ten brief findings from the demo
// cluster stays well under 8 KB of JSON, which an agent reads whole.
const (
	defaultPageSize   = 10
	maxPageSize       = 50
	defaultKeepAudits = 8
	// maxBriefObjects is how many objects a finding lists on a page;
	// get_finding lists them all.
	maxBriefObjects = 3
	// maxEvidenceChars bounds the one evidence line a page shows.
	maxEvidenceChars = 240
)

// AuditInput is what the audit tool takes. Exactly one source applies:
// files, demo, or (by default) a live cluster.
type AuditInput struct {
	Context       string   `json:"context,omitempty" jsonschema:"kube context to audit; default: the server's --context, else the kubeconfig's current context"`
	Kubeconfig    string   `json:"kubeconfig,omitempty" jsonschema:"path of a kubeconfig file; default: the server's --kubeconfig, else KUBECONFIG, else ~/.kube/config"`
	Namespace     string   `json:"namespace,omitempty" jsonschema:"audit only this namespace (cluster-scoped objects such as nodes are still read); checks that need other namespaces report partial, never pass; applies to files and demo too; default: all namespaces"`
	Files         []string `json:"files,omitempty" jsonschema:"audit these YAML/JSON files or directories (kubectl get -o yaml output, List objects, multi-document, gzip, kubegap snapshots) instead of a cluster"`
	Demo          bool     `json:"demo,omitempty" jsonschema:"audit kubegap's embedded demo cluster, which shows the founding gaps"`
	Checks        []string `json:"checks,omitempty" jsonschema:"run only these check IDs (see list_checks); default: all"`
	SkipChecks    []string `json:"skip_checks,omitempty" jsonschema:"skip these check IDs"`
	MinSeverity   string   `json:"min_severity,omitempty" jsonschema:"list only findings at or above this severity: critical, high, medium, low, info; default: low"`
	PageSize      int      `json:"page_size,omitempty" jsonschema:"findings per page, 1 to 50 (0 is an error); default: 10"`
	Page          int      `json:"page,omitempty" jsonschema:"1-based page number; with audit_id it pages an earlier audit instead of running a new one"`
	Cursor        string   `json:"cursor,omitempty" jsonschema:"next_cursor from an earlier audit response: returns its next page without re-running; the other arguments are then ignored"`
	TargetVersion string   `json:"target_version,omitempty" jsonschema:"upgrade preflight: also judge the cluster as it will be during and after an upgrade to this Kubernetes minor, e.g. 1.35; findings about it carry preflight before or during"`
	AuditID       string   `json:"audit_id,omitempty" jsonschema:"page an earlier audit (with page) instead of running a new one"`
}

// AuditOutput is one page of an audit.
type AuditOutput struct {
	AuditID string          `json:"audit_id" jsonschema:"ID of this audit's report, for get_finding and paging; the server keeps the last 8"`
	Source  snapshot.Source `json:"source" jsonschema:"what was read; source.scope.namespaces lists the namespaces a live read was limited to (absent: all)"`
	// Coverage says what could not be read completely: a resource that is
	// forbidden, not in the input or read only in part leaves the rules
	// that need it unknown. Resources read completely are only counted, to
	// keep the page small.
	Coverage []CoverageBrief `json:"coverage" jsonschema:"each resource the audit needed that was not read completely: forbidden, error, not-in-input, or read in part (files, a namespace scope); not-served ones are known absent and listed too"`
	// CompleteResources counts the resources read completely.
	CompleteResources int            `json:"complete_resources" jsonschema:"how many of the resources the audit needed were read completely (not listed in coverage)"`
	Summary           report.Summary `json:"summary" jsonschema:"findings by severity, over the whole audit"`
	// Checks lists the checks that did not pass; Passed only names the
	// rest, so that the page stays small as the number of checks grows.
	Checks []CheckStatus `json:"checks" jsonschema:"every selected check that did not pass: fail, partial or not-evaluated, and why"`
	Passed []string      `json:"passed" jsonschema:"IDs of the selected checks that passed: every rule ran on complete input and found nothing"`
	// Findings is this page, most severe first.
	Findings      []FindingBrief `json:"findings"`
	TotalFindings int            `json:"total_findings" jsonschema:"findings at or above min_severity, across all pages"`
	MinSeverity   string         `json:"min_severity"`
	Page          int            `json:"page"`
	PageSize      int            `json:"page_size"`
	NextPage      int            `json:"next_page,omitempty" jsonschema:"the next page number; absent on the last page"`
	NextCursor    string         `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last page"`
	Hint          string         `json:"hint,omitempty"`
}

// CoverageBrief is how reading one resource went.
type CoverageBrief struct {
	Resource string `json:"resource"`
	Status   string `json:"status"`
	Count    int    `json:"count"`
	Complete bool   `json:"complete,omitempty" jsonschema:"true when these are all the objects in scope (a live read or a snapshot), false for plain files"`
	Message  string `json:"message,omitempty"`
}

// CheckStatus is how one check went in an audit.
type CheckStatus struct {
	ID       string `json:"id"`
	Status   string `json:"status" jsonschema:"fail (findings), pass (every rule ran on complete input), partial (some input incomplete or unread: silence proves nothing there) or not-evaluated"`
	Reason   string `json:"reason,omitempty" jsonschema:"for partial, not-evaluated or incomplete checks: which rules could not run on complete input and why (RBAC, files, namespace scope)"`
	Findings int    `json:"findings,omitempty"`
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
}

func (h *handlers) audit(ctx context.Context, _ *sdk.CallToolRequest, in AuditInput) (*sdk.CallToolResult, AuditOutput, error) {
	var (
		st       *storedAudit
		minSev   = finding.Low
		pageSize = defaultPageSize
		offset   int
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
		minSev, pageSize, offset = c.MinSeverity, c.PageSize, c.Offset
	default:
		var err error
		if minSev, pageSize, err = pagingArgs(in); err != nil {
			return nil, AuditOutput{}, err
		}
		page := max(in.Page, 1)
		offset = (page - 1) * pageSize
		if in.AuditID != "" {
			if st, err = h.audits.get(in.AuditID); err != nil {
				return nil, AuditOutput{}, err
			}
			break
		}
		rep, err := h.runAudit(ctx, in)
		if err != nil {
			return nil, AuditOutput{}, err
		}
		st = h.audits.add(rep)
	}
	out, err := auditPage(st, minSev, pageSize, offset)
	return nil, out, err
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
	target, err := audit.ParseTarget("target_version", in.TargetVersion)
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
		snap, err = snapshot.LoadPaths(in.Files)
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
	return audit.Run(snap, selected, audit.Options{Target: target}), nil
}

// auditPage cuts one page out of a stored audit.
func auditPage(st *storedAudit, minSev finding.Severity, pageSize, offset int) (AuditOutput, error) {
	rep := st.report
	// IDs number the whole report, not the filtered list, so a finding
	// keeps its ID whatever min_severity a later page asks for.
	type indexed struct {
		id int
		f  *finding.Finding
	}
	var shown []indexed
	for i := range rep.Findings {
		if rep.Findings[i].Severity >= minSev {
			shown = append(shown, indexed{i + 1, &rep.Findings[i]})
		}
	}
	total := len(shown)
	if offset > 0 && offset >= total {
		pages := (total + pageSize - 1) / pageSize
		return AuditOutput{}, fmt.Errorf("page %d is past the end: audit %s has %d findings at or above %s, %d page(s) of %d",
			offset/pageSize+1, st.id, total, minSev, pages, pageSize)
	}
	out := AuditOutput{
		AuditID:       st.id,
		Source:        rep.Source,
		Summary:       rep.Summary,
		Checks:        []CheckStatus{},
		Passed:        []string{},
		Findings:      []FindingBrief{},
		TotalFindings: total,
		MinSeverity:   minSev.String(),
		Page:          offset/pageSize + 1,
		PageSize:      pageSize,
	}
	for _, c := range rep.Checks {
		if c.Status == report.Pass {
			out.Passed = append(out.Passed, c.ID)
			continue
		}
		out.Checks = append(out.Checks, CheckStatus{ID: c.ID, Status: string(c.Status), Reason: c.Reason, Findings: c.Findings})
	}
	out.Coverage = []CoverageBrief{}
	for _, c := range rep.Coverage {
		if c.Complete && c.Status == snapshot.StatusRead && len(c.Namespaces) == 0 {
			out.CompleteResources++
			continue
		}
		out.Coverage = append(out.Coverage, CoverageBrief{Resource: c.Resource, Status: string(c.Status), Count: c.Count,
			Complete: c.Complete, Message: c.Message})
	}
	end := min(offset+pageSize, total)
	for _, x := range shown[offset:end] {
		out.Findings = append(out.Findings, brief(x.id, x.f))
	}
	if end < total {
		out.NextPage = out.Page + 1
		out.NextCursor = encodeCursor(cursor{AuditID: st.id, Offset: end, PageSize: pageSize, MinSeverity: minSev})
	}
	if total > 0 {
		out.Hint = "get_finding {audit_id, finding_id} gives the message, every object, all evidence and the remediation; get_case {id} opens a cited incident"
	}
	return out, nil
}

func brief(id int, f *finding.Finding) FindingBrief {
	b := FindingBrief{
		FindingID:    findingID(id),
		Check:        f.Check,
		Severity:     f.Severity.String(),
		Title:        f.Title,
		Objects:      []string{},
		ObjectsTotal: len(f.Objects),
		Cases:        nonNil(f.Cases),
		Preflight:    f.Preflight,
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
	if err := json.Unmarshal(b, &c); err != nil || c.AuditID == "" || c.Offset < 0 || c.PageSize < 1 || c.PageSize > maxPageSize {
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
