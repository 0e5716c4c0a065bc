package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/rbacgen"
)

// connect starts a server with opts on in-memory transports and returns a
// client session to it.
func connect(t *testing.T, opts Options) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := sdk.NewInMemoryTransports()
	srv := NewServer(opts)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, serverT) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting: %v", err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		cancel()
		<-done
	})
	return cs
}

// call calls a tool that must succeed and decodes its structured output
// into out. It returns the raw structured JSON.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args any, out any) []byte {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", tool, args, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("%s: marshalling structured content: %v", tool, err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", tool, b, err)
		}
	}
	return b
}

// callErr calls a tool that must fail with a tool error (not a protocol
// error) and returns the error text.
func callErr(t *testing.T, cs *sdk.ClientSession, tool string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error, want a tool error: %v", tool, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want a tool error", tool, args)
	}
	return text(res)
}

func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestToolsAreReadOnly(t *testing.T) {
	base := []string{ToolAudit, ToolExplainCheck, ToolGetCase, ToolGetFinding, ToolListChecks, ToolSearchCases}
	for _, tc := range []struct {
		name     string
		registry bool
		want     []string
	}{
		{"default", false, base},
		{"allow-registry", true, append(append([]string{}, base...), ToolInspectImage)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, Options{AllowRegistry: tc.registry})
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				a := tool.Annotations
				if a == nil {
					t.Errorf("%s: no annotations", tool.Name)
					continue
				}
				if !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint || a.OpenWorldHint == nil {
					t.Errorf("%s: annotations %+v, want read-only, not destructive, idempotent, open-world set", tool.Name, a)
				}
				if wantOpen := tool.Name == ToolInspectImage; a.OpenWorldHint != nil && *a.OpenWorldHint != wantOpen {
					t.Errorf("%s: openWorldHint %v, want %v", tool.Name, *a.OpenWorldHint, wantOpen)
				}
				if tool.InputSchema == nil || tool.OutputSchema == nil {
					t.Errorf("%s: missing input or output schema", tool.Name)
				}
				if tool.Description == "" {
					t.Errorf("%s: no description", tool.Name)
				}
			}
			sort.Strings(names)
			want := append([]string{}, tc.want...)
			sort.Strings(want)
			if strings.Join(names, ",") != strings.Join(want, ",") {
				t.Errorf("tools = %v, want %v", names, want)
			}
		})
	}
}

func TestAuditDemoFirstPage(t *testing.T) {
	cs := connect(t, Options{})
	var out AuditOutput
	raw := call(t, cs, ToolAudit, map[string]any{"demo": true}, &out)
	t.Logf("first demo page: %d bytes of JSON, %d of %d findings", len(raw), len(out.Findings), out.TotalFindings)
	if len(raw) > 8192 {
		t.Errorf("first page is %d bytes of JSON, want at most 8192", len(raw))
	}
	if out.AuditID == "" || out.Source.Type != "demo" {
		t.Errorf("audit_id %q, source %+v", out.AuditID, out.Source)
	}
	if out.PageSize != defaultPageSize || out.Page != 1 || out.MinSeverity != "low" {
		t.Errorf("page %d, page_size %d, min_severity %q; want 1, %d, low", out.Page, out.PageSize, out.MinSeverity, defaultPageSize)
	}
	if want := len(audit.ForTarget(checks.All(), nil)); len(out.Checks)+len(out.Passed) != want {
		t.Errorf("%d checks reported and %d passed, want %d in all (every check but the preflight ones)", len(out.Checks), len(out.Passed), want)
	}
	if len(out.Passed) == 0 {
		t.Error("no check passed on the demo cluster")
	}
	for _, c := range out.Checks {
		if c.Status == "pass" {
			t.Errorf("check %s passed but is listed in checks, not passed", c.ID)
		}
	}
	if out.TotalFindings == 0 || len(out.Findings) == 0 {
		t.Fatal("the demo cluster produced no findings")
	}
	if len(out.Findings) > defaultPageSize {
		t.Errorf("%d findings on a page of %d", len(out.Findings), defaultPageSize)
	}
	// The founding gaps must show: every founding case is cited by some
	// finding of the demo audit, across all pages.
	cited := map[string]bool{}
	for _, f := range allFindings(t, cs, out) {
		for _, c := range f.Cases {
			cited[c] = true
		}
		if len(f.Objects) > maxBriefObjects || f.ObjectsTotal < len(f.Objects) {
			t.Errorf("%s: %d objects shown of %d", f.FindingID, len(f.Objects), f.ObjectsTotal)
		}
		if strings.Contains(f.Evidence, "\n") {
			t.Errorf("%s: evidence has more than one line: %q", f.FindingID, f.Evidence)
		}
	}
	for _, id := range []string{"azure-cni-v2-glibc", "ubuntu-systemd-dns-2022", "daemonset-pull-always-nat-ratelimit", "containerd-chained-cni-regression"} {
		if !cited[id] {
			t.Errorf("no demo finding cites %s", id)
		}
	}
}

// allFindings pages through an audit with next_cursor from its first page.
func allFindings(t *testing.T, cs *sdk.ClientSession, first AuditOutput) []FindingBrief {
	t.Helper()
	all := append([]FindingBrief{}, first.Findings...)
	page := first
	for page.NextCursor != "" {
		var next AuditOutput
		call(t, cs, ToolAudit, map[string]any{"cursor": page.NextCursor}, &next)
		if next.AuditID != first.AuditID {
			t.Fatalf("cursor moved to audit %s from %s", next.AuditID, first.AuditID)
		}
		if len(all) > first.TotalFindings {
			t.Fatalf("paging does not end: %d findings seen of %d", len(all), first.TotalFindings)
		}
		all = append(all, next.Findings...)
		page = next
	}
	return all
}

func TestAuditPaging(t *testing.T) {
	cs := connect(t, Options{})
	var first AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "page_size": 2}, &first)
	if first.TotalFindings <= 2 {
		t.Fatalf("need more than 2 demo findings to page, have %d", first.TotalFindings)
	}
	if first.NextPage != 2 || first.NextCursor == "" {
		t.Fatalf("first page: next_page %d, next_cursor %q", first.NextPage, first.NextCursor)
	}

	byCursor := allFindings(t, cs, first)
	if len(byCursor) != first.TotalFindings {
		t.Errorf("cursor paging saw %d findings, total_findings is %d", len(byCursor), first.TotalFindings)
	}

	// Page numbers over the same audit give the same findings in the same
	// order, and the last page has no next.
	var byPage []FindingBrief
	for p := 1; ; p++ {
		var out AuditOutput
		call(t, cs, ToolAudit, map[string]any{"audit_id": first.AuditID, "page": p, "page_size": 2}, &out)
		byPage = append(byPage, out.Findings...)
		if out.NextPage == 0 {
			if out.NextCursor != "" {
				t.Errorf("last page %d has a next_cursor", p)
			}
			break
		}
		if out.NextPage != p+1 {
			t.Fatalf("page %d: next_page %d", p, out.NextPage)
		}
	}
	seen := map[string]bool{}
	for i := range byCursor {
		if i >= len(byPage) || byPage[i].FindingID != byCursor[i].FindingID {
			t.Fatalf("finding %d differs between cursor and page paging", i)
		}
		if seen[byCursor[i].FindingID] {
			t.Errorf("finding_id %s appears twice", byCursor[i].FindingID)
		}
		seen[byCursor[i].FindingID] = true
	}

	// Severity order: most severe first.
	rank := map[string]int{"critical": 4, "high": 3, "medium": 2, "low": 1, "info": 0}
	for i := 1; i < len(byCursor); i++ {
		if rank[byCursor[i].Severity] > rank[byCursor[i-1].Severity] {
			t.Errorf("%s (%s) after %s (%s)", byCursor[i].FindingID, byCursor[i].Severity, byCursor[i-1].FindingID, byCursor[i-1].Severity)
		}
	}

	msg := callErr(t, cs, ToolAudit, map[string]any{"audit_id": first.AuditID, "page": 1000, "page_size": 2})
	if !strings.Contains(msg, "past the end") {
		t.Errorf("page past the end: %q", msg)
	}
}

func TestAuditMinSeverity(t *testing.T) {
	cs := connect(t, Options{})
	var all, high AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "min_severity": "info", "page_size": 50}, &all)
	call(t, cs, ToolAudit, map[string]any{"audit_id": all.AuditID, "min_severity": "high", "page_size": 50}, &high)
	want := map[string]bool{}
	n := 0
	for _, f := range all.Findings {
		if f.Severity == "high" || f.Severity == "critical" {
			want[f.FindingID] = true
			n++
		}
	}
	if high.TotalFindings != n || high.TotalFindings != high.Summary.Critical+high.Summary.High {
		t.Errorf("min_severity high: %d findings, want %d (summary %+v)", high.TotalFindings, n, high.Summary)
	}
	for _, f := range high.Findings {
		if !want[f.FindingID] {
			t.Errorf("%s (%s) listed at min_severity high, or its ID changed", f.FindingID, f.Severity)
		}
	}
}

func TestAuditFiles(t *testing.T) {
	cs := connect(t, Options{})
	fixture := filepath.Join("..", "checks", "registries", "testdata", "image-pull-always", "gap.yaml")
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"files": []string{fixture}, "checks": []string{"image-pull-always"}}, &out)
	if out.Source.Type != "files" {
		t.Errorf("source %+v, want files", out.Source)
	}
	if len(out.Checks) != 1 || out.Checks[0].ID != "image-pull-always" || out.Checks[0].Status != "fail" {
		t.Fatalf("checks = %+v, want image-pull-always failing", out.Checks)
	}
	if out.TotalFindings == 0 || out.Findings[0].Check != "image-pull-always" {
		t.Fatalf("findings = %+v", out.Findings)
	}
	var hasCase bool
	for _, c := range out.Findings[0].Cases {
		hasCase = hasCase || c == "daemonset-pull-always-nat-ratelimit"
	}
	if !hasCase {
		t.Errorf("finding cites %v, want daemonset-pull-always-nat-ratelimit", out.Findings[0].Cases)
	}
}

func TestAuditNotEvaluatedReason(t *testing.T) {
	// A file with nothing but a ConfigMap: every check that needs nodes or
	// pods has nothing read, and must say so rather than pass.
	dir := t.TempDir()
	f := filepath.Join(dir, "cm.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, Options{})
	var brief, detailed AuditOutput
	call(t, cs, ToolAudit, map[string]any{"files": []string{f}}, &brief)
	call(t, cs, ToolAudit, map[string]any{"audit_id": brief.AuditID, "check_detail": true}, &detailed)
	if len(detailed.Checks) != len(brief.Checks) || len(brief.Checks) == 0 {
		t.Fatalf("%d checks in brief, %d with detail", len(brief.Checks), len(detailed.Checks))
	}
	notEval := 0
	for i, c := range detailed.Checks {
		if b := brief.Checks[i]; b.ID != c.ID || b.Status != c.Status || b.Reason != "" || len(b.Missing) != 0 {
			t.Errorf("brief %+v, detailed %+v: want the same check and status, the reason only with check_detail", b, c)
		}
		if c.Status == "not-evaluated" {
			notEval++
			if c.Reason == "" {
				t.Errorf("%s: not-evaluated without a reason", c.ID)
			}
		}
	}
	if notEval == 0 {
		t.Errorf("no check is not-evaluated on a ConfigMap-only input: %+v", detailed.Checks)
	}
	// Every resource a check lacked is in coverage, with how many checks
	// it held back.
	held := map[string]int{}
	for _, c := range detailed.Checks {
		for _, m := range c.Missing {
			held[m]++
		}
	}
	for _, cov := range detailed.Coverage {
		if cov.Checks != held[cov.Resource] {
			t.Errorf("coverage %s: checks %d, but %d checks list it missing", cov.Resource, cov.Checks, held[cov.Resource])
		}
		delete(held, cov.Resource)
	}
	if len(held) > 0 {
		t.Errorf("missing resources not in coverage: %v", held)
	}

	// explain_check with audit_id says it rule by rule, and takes a prefix
	// in any case.
	var pick CheckStatus
	for _, c := range detailed.Checks {
		if c.Status == "not-evaluated" {
			pick = c
			break
		}
	}
	var ex ExplainCheckOutput
	call(t, cs, ToolExplainCheck, map[string]any{"id": strings.ToUpper(pick.ID), "audit_id": brief.AuditID}, &ex)
	if ex.ID != pick.ID || ex.Result == nil || ex.Result.Status != pick.Status || ex.Result.Reason != pick.Reason || len(ex.Result.Rules) == 0 {
		t.Fatalf("explain_check %s in %s: %+v, want its status %s and rules", pick.ID, brief.AuditID, ex.Result, pick.Status)
	}
	for _, r := range ex.Result.Rules {
		if r.Status != "evaluated" && r.Reason == "" {
			t.Errorf("%s rule %s is %s without a reason", pick.ID, r.ID, r.Status)
		}
	}
}

// TestFilesRelativePaths: a relative path is read from the server's
// working directory, and when it is not there the error names that
// directory, the path given and the path tried.
func TestFilesRelativePaths(t *testing.T) {
	cs := connect(t, Options{})
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel := filepath.Join("..", "checks", "registries", "testdata", "image-pull-always", "gap.yaml")
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"files": []string{rel}, "checks": []string{"image-pull-always"}}, &out)
	if want := filepath.Join(wd, rel); len(out.Source.Paths) != 1 || out.Source.Paths[0] != want {
		t.Errorf("source paths %v, want %s", out.Source.Paths, want)
	}
	if out.TotalFindings == 0 {
		t.Errorf("no finding from %s", rel)
	}
	msg := callErr(t, cs, ToolAudit, map[string]any{"files": []string{"no-such-dump.yaml"}})
	for _, w := range []string{`"no-such-dump.yaml"`, "does not exist", "working directory " + wd, filepath.Join(wd, "no-such-dump.yaml")} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not mention %q", msg, w)
		}
	}
}

// TestIDsByPrefix: get_case and explain_check take IDs as the CLI does:
// any case, or a prefix only one ID starts with; a shared prefix is
// refused with the candidates named.
func TestIDsByPrefix(t *testing.T) {
	cs := connect(t, Options{})
	var c CaseOutput
	call(t, cs, ToolGetCase, map[string]any{"id": "AZURE-CNI-V2-GL"}, &c)
	if c.ID != "azure-cni-v2-glibc" {
		t.Errorf("get_case AZURE-CNI-V2-GL gave %q", c.ID)
	}
	var ex ExplainCheckOutput
	call(t, cs, ToolExplainCheck, map[string]any{"id": "Host-Binary"}, &ex)
	if ex.ID != "host-binary-glibc" || ex.Result != nil {
		t.Errorf("explain_check Host-Binary gave %q (result %v)", ex.ID, ex.Result)
	}
	// It carries the check's role: kubegap rbac --checks host-binary-glibc.
	hostCheck, _ := checks.Lookup("host-binary-glibc")
	if want := rbacgen.YAML(audit.Resources([]check.Check{hostCheck}), rbacgen.Options{}); ex.RBAC != want || !strings.Contains(ex.RBAC, "kind: ClusterRole") {
		t.Errorf("explain_check rbac:\n%s\nwant:\n%s", ex.RBAC, want)
	}
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	_, cands, _ := lib.Find("a")
	msg := callErr(t, cs, ToolGetCase, map[string]any{"id": "a"})
	for _, id := range append([]string{"ambiguous"}, cands...) {
		if !strings.Contains(msg, id) {
			t.Errorf("get_case a: %q does not name %s", msg, id)
		}
	}
	_, cands, _ = checks.Find("i")
	if len(cands) < 2 {
		t.Fatalf("want several checks starting with i, got %v", cands)
	}
	msg = callErr(t, cs, ToolExplainCheck, map[string]any{"id": "I"})
	for _, id := range append([]string{"ambiguous"}, cands...) {
		if !strings.Contains(msg, id) {
			t.Errorf("explain_check I: %q does not name %s", msg, id)
		}
	}
}

// TestAuditNamespaceScope: namespace works the same on every source and
// the result states its scope; a check whose inputs lie outside the scope
// is never pass.
func TestAuditNamespaceScope(t *testing.T) {
	cs := connect(t, Options{})
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "namespace": "payments"}, &out)
	if got := out.Source.Scope.Namespaces; len(got) != 1 || got[0] != "payments" {
		t.Fatalf("scope = %+v, want namespace payments", out.Source.Scope)
	}
	for _, c := range out.Checks {
		if c.Status == "pass" && readsNamespaced(t, c.ID) {
			t.Errorf("%s passes on a namespace-scoped audit: %+v", c.ID, c)
		}
		if c.ID == "host-binary-glibc" && c.Status == "fail" {
			t.Errorf("host-binary-glibc fails in payments, whose namespace holds no installer DaemonSet: %+v", c)
		}
	}
}

// readsNamespaced reports whether a check reads some namespaced resource.
// Only those have inputs outside a namespace scope: a check that reads
// cluster-scoped objects alone (APIServices, Namespaces) sees all of them
// under -n, complete, and may pass.
func readsNamespaced(t *testing.T, id string) bool {
	t.Helper()
	c, ok := checks.Lookup(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	for _, in := range c.Reads {
		if in.Resource.Namespaced {
			return true
		}
	}
	return false
}

func TestGetFinding(t *testing.T) {
	cs := connect(t, Options{})
	var page AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true}, &page)
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range page.Findings {
		var f FindingDetail
		call(t, cs, ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": b.FindingID}, &f)
		if f.FindingID != b.FindingID || f.Check != b.Check || f.Title != b.Title || f.Severity != b.Severity {
			t.Errorf("get_finding %s = %s/%s/%q, page had %s/%s/%q", b.FindingID, f.FindingID, f.Check, f.Title, b.FindingID, b.Check, b.Title)
		}
		if len(f.Objects) != b.ObjectsTotal {
			t.Errorf("%s: %d objects in full, page said %d", b.FindingID, len(f.Objects), b.ObjectsTotal)
		}
		for i, o := range b.Objects {
			if i >= len(f.Objects) || f.Objects[i].String() != o {
				t.Errorf("%s: page object %d is %q, not the start of the full list", b.FindingID, i, o)
			}
		}
		if f.Message == "" || f.Remediation == "" || len(f.Evidence) == 0 {
			t.Errorf("%s: message, remediation or evidence missing", b.FindingID)
		}
		if len(f.Evidence) > 0 && !strings.HasPrefix(f.Evidence[0], strings.TrimSuffix(b.Evidence, " …")) {
			t.Errorf("%s: page evidence %q is not the start of %q", b.FindingID, b.Evidence, f.Evidence[0])
		}
		for _, c := range f.Cases {
			lc, ok := lib.Case(c.ID)
			if !ok || c.Title != lc.Title {
				t.Errorf("%s: case %s titled %q, library has %q (found %v)", b.FindingID, c.ID, c.Title, lc.Title, ok)
			}
		}
	}
	// The stable ID is the report's: the same in a second audit.
	var again AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true}, &again)
	var f1, f2 FindingDetail
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": "F1"}, &f1)
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": again.AuditID, "finding_id": "F1"}, &f2)
	if !strings.HasPrefix(f1.ID, "kg-") || f1.ID != f2.ID || page.AuditID == again.AuditID {
		t.Errorf("stable IDs %q and %q across audits %s and %s", f1.ID, f2.ID, page.AuditID, again.AuditID)
	}
	// Lower case and bare numbers name the same finding.
	var a, b FindingDetail
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": "f1"}, &a)
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": "1"}, &b)
	if a.FindingID != "F1" || b.FindingID != "F1" {
		t.Errorf("f1 -> %s, 1 -> %s, want F1", a.FindingID, b.FindingID)
	}
}

func TestChecksTools(t *testing.T) {
	cs := connect(t, Options{})
	var list ListChecksOutput
	call(t, cs, ToolListChecks, map[string]any{}, &list)
	all := checks.All()
	if len(list.Checks) != len(all) {
		t.Fatalf("list_checks gave %d checks, registry has %d", len(list.Checks), len(all))
	}
	for i, c := range all {
		got := list.Checks[i]
		if got.ID != c.ID || got.Severity != c.Severity.String() || len(got.Cases) != len(c.Cases) {
			t.Errorf("list_checks[%d] = %+v, want %s", i, got, c.ID)
		}
		var info CheckInfo
		call(t, cs, ToolExplainCheck, map[string]any{"id": c.ID}, &info)
		if info.Description != c.Description || len(info.Reads) != len(c.Reads) {
			t.Errorf("explain_check %s: description or reads differ from the registry", c.ID)
		}
		for j, r := range c.Reads {
			if info.Reads[j].Resource != r.Resource.String() || info.Reads[j].Optional != r.Optional {
				t.Errorf("explain_check %s: read %d = %+v, want %s", c.ID, j, info.Reads[j], r.Resource)
			}
		}
		for _, cc := range info.Cases {
			if cc.Title == "" {
				t.Errorf("explain_check %s: case %s has no title", c.ID, cc.ID)
			}
		}
	}
}

func TestSearchCases(t *testing.T) {
	cs := connect(t, Options{})
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	var everything SearchCasesOutput
	call(t, cs, ToolSearchCases, map[string]any{"limit": 50}, &everything)
	if everything.Total != len(lib.Cases()) {
		t.Errorf("total %d, library has %d cases", everything.Total, len(lib.Cases()))
	}
	// Pick a component some cases carry, and check the filter against the
	// library's own query.
	comp, ok := everything.facet("component")
	if !ok || len(comp.Values) == 0 {
		t.Fatalf("no component facet values: %+v", everything.Facets)
	}
	value := comp.Values[0]
	var filtered SearchCasesOutput
	call(t, cs, ToolSearchCases, map[string]any{"component": []string{value.ID}, "limit": 50}, &filtered)
	if filtered.Total != value.Count {
		t.Errorf("component=%s: %d cases, facet count said %d", value.ID, filtered.Total, value.Count)
	}
	want, err := lib.Query(library.Query{Components: []string{value.ID}, Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(filtered.Cases) != len(want.Cases) {
		t.Fatalf("component=%s: %d cases, library query gives %d", value.ID, len(filtered.Cases), len(want.Cases))
	}
	for i, c := range filtered.Cases {
		if c.ID != want.Cases[i].ID || c.Title == "" || c.Date == "" {
			t.Errorf("case %d = %+v, want %s", i, c, want.Cases[i].ID)
		}
		if len(c.Summary) > maxSummaryChars+len(" …") {
			t.Errorf("%s: summary is %d bytes", c.ID, len(c.Summary))
		}
	}
	fc, _ := filtered.facet("component")
	var selected bool
	for _, v := range fc.Values {
		selected = selected || (v.ID == value.ID && v.Selected)
		if v.Count == 0 && !v.Selected {
			t.Errorf("facet value %s listed with count 0", v.ID)
		}
	}
	if !selected {
		t.Errorf("component %s not marked selected", value.ID)
	}

	// Paging with limit and offset.
	var p1, p2 SearchCasesOutput
	call(t, cs, ToolSearchCases, map[string]any{"limit": 2}, &p1)
	if p1.NextOffset != 2 || len(p1.Cases) != 2 {
		t.Fatalf("limit 2: %d cases, next_offset %d", len(p1.Cases), p1.NextOffset)
	}
	call(t, cs, ToolSearchCases, map[string]any{"limit": 2, "offset": p1.NextOffset}, &p2)
	if len(p2.Cases) == 0 || p2.Cases[0].ID == p1.Cases[0].ID || p2.Cases[0].ID != everything.Cases[2].ID {
		t.Errorf("second page starts at %+v, want %s", p2.Cases, everything.Cases[2].ID)
	}

	var search SearchCasesOutput
	call(t, cs, ToolSearchCases, map[string]any{"search": "glibc"}, &search)
	if search.Total == 0 {
		t.Error("search glibc found nothing")
	}
}

func (o SearchCasesOutput) facet(name string) (FacetCount, bool) {
	for _, f := range o.Facets {
		if f.Name == name {
			return f, true
		}
	}
	return FacetCount{}, false
}

func TestGetCase(t *testing.T) {
	cs := connect(t, Options{})
	var out CaseOutput
	call(t, cs, ToolGetCase, map[string]any{"id": "azure-cni-v2-glibc"}, &out)
	if out.ID != "azure-cni-v2-glibc" || out.Title == "" || len(out.Sources) == 0 || out.RootCause.Text == "" {
		t.Errorf("get_case returned %+v", out.Case)
	}
	var detected []string
	for _, c := range out.DetectedBy {
		detected = append(detected, c.ID)
	}
	// Cross-check against the registry rather than a fixed list.
	var want []string
	for _, c := range checks.All() {
		for _, id := range c.CaseIDs() {
			if id == out.ID {
				want = append(want, c.ID)
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no check cites azure-cni-v2-glibc; the founding case must be detected")
	}
	if strings.Join(detected, ",") != strings.Join(want, ",") {
		t.Errorf("detected_by %v, want %v", detected, want)
	}
}

func TestBadInputIsAToolError(t *testing.T) {
	cs := connect(t, Options{})
	var page AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true}, &page)
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
		want []string // substrings of the message
	}{
		{"unknown check", ToolAudit, map[string]any{"demo": true, "checks": []string{"no-such-check"}}, []string{`unknown check "no-such-check"`, "list_checks"}},
		{"mistyped check", ToolAudit, map[string]any{"demo": true, "checks": []string{"verison-skew"}}, []string{`unknown check "verison-skew"; did you mean version-skew?`}},
		{"ambiguous skip", ToolAudit, map[string]any{"demo": true, "skip_checks": []string{"ingress"}}, []string{`check "ingress" is ambiguous`, "ingress-class-binding"}},
		{"missing file", ToolAudit, map[string]any{"files": []string{missing}}, []string{"nope.yaml"}},
		{"huge page size", ToolAudit, map[string]any{"demo": true, "page_size": 100000}, []string{"page_size", "maximum", "50"}},
		{"zero page size", ToolAudit, map[string]any{"demo": true, "page_size": 0}, []string{"page_size", "minimum", "1"}},
		{"negative page", ToolAudit, map[string]any{"demo": true, "page": -1}, []string{"/page", "minimum"}},
		{"bad severity", ToolAudit, map[string]any{"demo": true, "min_severity": "urgent"}, []string{"min_severity", "critical"}},
		{"demo and files", ToolAudit, map[string]any{"demo": true, "files": []string{"x"}}, []string{"cannot be combined"}},
		{"context with demo", ToolAudit, map[string]any{"demo": true, "context": "x"}, []string{"live cluster only"}},
		{"unknown audit_id", ToolAudit, map[string]any{"audit_id": "A99-000000", "page": 2}, []string{`unknown audit_id "A99-000000"`, page.AuditID}},
		{"bad cursor", ToolAudit, map[string]any{"cursor": "garbage!"}, []string{"cursor", "next_cursor"}},
		{"cursor past the end", ToolAudit, map[string]any{"cursor": encodeCursor(cursor{AuditID: page.AuditID, Offset: 999, PageSize: 10, MinSeverity: 1, Page: 2})}, []string{"past the end", page.AuditID}},
		{"forged cursor", ToolAudit, map[string]any{"cursor": encodeCursor(cursor{AuditID: page.AuditID, PageSize: 9999})}, []string{"cursor"}},
		{"unknown argument", ToolAudit, map[string]any{"demo": true, "colour": "red"}, []string{"colour"}},
		{"wrong type", ToolAudit, map[string]any{"demo": "yes"}, []string{"demo"}},
		{"get_finding unknown audit", ToolGetFinding, map[string]any{"audit_id": "nope", "finding_id": "F1"}, []string{`unknown audit_id "nope"`}},
		{"get_finding unknown finding", ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": "F9999"}, []string{`unknown finding_id "F9999"`, "F1 to F"}},
		{"get_finding junk id", ToolGetFinding, map[string]any{"audit_id": page.AuditID, "finding_id": "zero"}, []string{`unknown finding_id "zero"`}},
		{"get_finding missing args", ToolGetFinding, map[string]any{}, []string{"audit_id"}},
		{"explain unknown check", ToolExplainCheck, map[string]any{"id": "nope"}, []string{`unknown check "nope"`, "version-skew"}},
		{"explain in unknown audit", ToolExplainCheck, map[string]any{"id": "version-skew", "audit_id": "A99-000000"}, []string{`unknown audit_id "A99-000000"`}},
		{"bad facet", ToolSearchCases, map[string]any{"root_cause": []string{"gremlins"}}, []string{"root_cause", "gremlins", "dependency-incompatibility"}},
		{"bad component", ToolSearchCases, map[string]any{"component": []string{"flux-capacitor"}}, []string{"component", "flux-capacitor", "cni-plugin"}},
		{"huge limit", ToolSearchCases, map[string]any{"limit": 1000}, []string{"limit", "maximum", "50"}},
		{"negative offset", ToolSearchCases, map[string]any{"offset": -3}, []string{"offset", "minimum"}},
		{"unknown case", ToolGetCase, map[string]any{"id": "nope"}, []string{`unknown case "nope"`, "search_cases"}},
		{"unregistered tool argument", ToolListChecks, map[string]any{"x": 1}, []string{"x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := callErr(t, cs, tc.tool, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
		})
	}
	// After all that, the server still answers.
	var list ListChecksOutput
	call(t, cs, ToolListChecks, map[string]any{}, &list)
	if len(list.Checks) == 0 {
		t.Error("list_checks empty after the bad calls")
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolInspectImage, Arguments: map[string]any{"reference": "x"}})
	if err == nil && !res.IsError {
		t.Error("inspect_image answered without --allow-registry")
	}
}

// kubeconfig writes a kubeconfig with the named contexts, each pointing
// at a closed port, the first one current.
func kubeconfig(t *testing.T, contexts ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n- name: dead\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n")
	for _, c := range contexts {
		b.WriteString("- name: " + c + "\n  context: {cluster: dead, user: u}\n")
	}
	b.WriteString("current-context: " + contexts[0] + "\n")
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLiveContextSelection(t *testing.T) {
	kc := kubeconfig(t, "dev", "prod")
	other := kubeconfig(t, "prod")
	for _, tc := range []struct {
		name string
		opts Options
		args map[string]any
		want []string
	}{
		// Allowed or unrestricted contexts get as far as dialling the
		// closed port: the error names the context that was tried.
		{"current context", Options{Kubeconfig: kc}, map[string]any{}, []string{`context "dev"`, "127.0.0.1:1"}},
		{"server default context", Options{Kubeconfig: kc, Context: "prod"}, map[string]any{}, []string{`context "prod"`}},
		{"call context wins", Options{Kubeconfig: kc, Context: "prod"}, map[string]any{"context": "dev"}, []string{`context "dev"`}},
		{"call kubeconfig", Options{}, map[string]any{"kubeconfig": kc, "context": "prod"}, []string{`context "prod"`, "127.0.0.1:1"}},
		{"unknown context", Options{Kubeconfig: kc}, map[string]any{"context": "staging"}, []string{`context "staging" is not in the kubeconfig`, `"dev", "prod"`}},
		{"allowed", Options{Kubeconfig: kc, AllowContexts: []string{"prod"}}, map[string]any{"context": "prod"}, []string{`context "prod"`, "127.0.0.1:1"}},
		{"refused", Options{Kubeconfig: kc, AllowContexts: []string{"prod"}}, map[string]any{"context": "dev"}, []string{`context "dev" refused`, `"prod"`}},
		{"refused current", Options{Kubeconfig: kc, AllowContexts: []string{"prod", "qa"}}, map[string]any{}, []string{`context "dev" refused`, `"prod", "qa"`}},
		{"other kubeconfig refused", Options{Kubeconfig: kc, AllowContexts: []string{"prod"}}, map[string]any{"kubeconfig": other, "context": "prod"}, []string{"kubeconfig", "refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := connect(t, tc.opts)
			msg := callErr(t, cs, ToolAudit, tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not mention %q", msg, w)
				}
			}
			if strings.Contains(msg, " refused: this server") && strings.Contains(msg, "127.0.0.1:1") {
				t.Errorf("a refused context was dialled: %q", msg)
			}
		})
	}
}

func TestAuditStoreKeepsTheLastFew(t *testing.T) {
	cs := connect(t, Options{KeepAudits: 3})
	var ids []string
	for range 5 {
		var out AuditOutput
		call(t, cs, ToolAudit, map[string]any{"demo": true, "checks": []string{"version-skew"}}, &out)
		ids = append(ids, out.AuditID)
	}
	for i, id := range ids {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolAudit, Arguments: map[string]any{"audit_id": id}})
		if err != nil {
			t.Fatal(err)
		}
		if kept := i >= len(ids)-3; res.IsError == kept {
			t.Errorf("audit %d (%s): error=%v, want kept=%v: %s", i, id, res.IsError, kept, text(res))
		}
	}
	// IDs from another server (a restart) are refused, not confused.
	cs2 := connect(t, Options{})
	var out AuditOutput
	call(t, cs2, ToolAudit, map[string]any{"demo": true, "checks": []string{"version-skew"}}, &out)
	if out.AuditID == ids[0] {
		t.Errorf("two servers issued the same audit_id %s", out.AuditID)
	}
}

func TestRecoverTool(t *testing.T) {
	h := recoverTool("boom", func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, AuditOutput, error) {
		panic(errors.New("boom"))
	})
	_, _, err := h(context.Background(), nil, struct{}{})
	if err == nil || !strings.Contains(err.Error(), "internal error in boom") {
		t.Errorf("panic gave %v, want an internal error naming the tool", err)
	}
	ok := recoverTool("fine", func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, int, error) {
		return nil, 7, errors.New("plain")
	})
	if _, n, err := ok(context.Background(), nil, struct{}{}); n != 7 || err == nil || err.Error() != "plain" {
		t.Errorf("recoverTool changed a normal return: %d, %v", n, err)
	}
}

func TestFirstLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"one line", 20, "one line"},
		{"first\nsecond", 20, "first …"},
		{"abcdefghij", 4, "abcd …"},
		{"ääää", 3, "ä …"}, // never cut inside a rune
		{"", 5, ""},
	} {
		if got := firstLine(tc.in, tc.n); got != tc.want {
			t.Errorf("firstLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestInputSchemasStateTheirLimits: the schemas an agent reads carry the
// allowed values and ranges, so it need not learn them by failing.
func TestInputSchemasStateTheirLimits(t *testing.T) {
	cs := connect(t, Options{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]map[string]any{}
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var m map[string]any
		json.Unmarshal(b, &m)
		props, _ := m["properties"].(map[string]any)
		schemas[tool.Name] = props
	}
	prop := func(tool, name string) map[string]any {
		p, _ := schemas[tool][name].(map[string]any)
		if p == nil {
			t.Fatalf("%s has no property %s", tool, name)
		}
		return p
	}
	// A list argument is a plain array: optional, never null.
	items := func(p map[string]any) map[string]any {
		if p["type"] != "array" {
			t.Errorf("list argument %v is not an array", p)
		}
		i, _ := p["items"].(map[string]any)
		return i
	}
	checkEnum := func(what string, enum any, want string) {
		list, _ := enum.([]any)
		for _, v := range list {
			if v == want {
				return
			}
		}
		t.Errorf("%s: enum %v lacks %s", what, enum, want)
	}
	checkEnum("audit.min_severity", prop(ToolAudit, "min_severity")["enum"], "critical")
	// checks and skip_checks take prefixes, so no enum refuses them.
	for _, name := range []string{"checks", "skip_checks"} {
		if e, ok := items(prop(ToolAudit, name))["enum"]; ok {
			t.Errorf("audit.%s has an enum %v, which refuses a prefix", name, e)
		}
	}
	checkEnum("search_cases.component", items(prop(ToolSearchCases, "component"))["enum"], "cni-plugin")
	checkEnum("search_cases.factor", items(prop(ToolSearchCases, "factor"))["enum"], "pull-always")
	for _, c := range []struct {
		tool, name string
		min, max   float64
	}{{ToolAudit, "page_size", 1, maxPageSize}, {ToolAudit, "page", 1, 0}, {ToolSearchCases, "limit", 1, maxCaseLimit}, {ToolSearchCases, "offset", 0, 0}} {
		p := prop(c.tool, c.name)
		if p["minimum"] != c.min || c.max > 0 && p["maximum"] != c.max {
			t.Errorf("%s.%s: minimum %v maximum %v, want %v %v", c.tool, c.name, p["minimum"], p["maximum"], c.min, c.max)
		}
	}
}

func TestAuditPageCarriesCoverageAndScope(t *testing.T) {
	cs := connect(t, Options{})
	raw := call(t, cs, ToolAudit, map[string]any{"demo": true}, nil)
	var page struct {
		Source struct {
			Scope *struct {
				Namespaces []string `json:"namespaces"`
			} `json:"scope"`
		} `json:"source"`
		Coverage          []CoverageBrief `json:"coverage"`
		CompleteResources int             `json:"complete_resources"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		t.Fatal(err)
	}
	if page.Source.Scope == nil || len(page.Source.Scope.Namespaces) != 0 {
		t.Errorf("scope %+v, want all namespaces", page.Source.Scope)
	}
	// The demo is a whole cluster: every resource complete, none listed.
	if len(page.Coverage) != 0 || page.CompleteResources < 10 {
		t.Errorf("coverage %+v, %d complete", page.Coverage, page.CompleteResources)
	}
	if len(raw) > 8192 {
		t.Errorf("first page %d bytes with coverage, want at most 8192", len(raw))
	}
}

// TestSchemasHaveSingleTypes: no schema an agent reads spells a type as an
// array (["null","array"]); nullable values are anyOf branches, which
// single-type dialects (Gemini's OpenAPI subset) accept.
func TestSchemasHaveSingleTypes(t *testing.T) {
	cs := connect(t, Options{AllowRegistry: true})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ty, ok := v["type"]; ok {
				if _, isString := ty.(string); !isString && path != "" && !strings.HasSuffix(path, ".properties") {
					t.Errorf("%s: %s.type is %v, want one type", tool, path, ty)
				}
			}
			for k, c := range v {
				walk(tool, path+"."+k, c)
			}
		case []any:
			for i, c := range v {
				walk(tool, fmt.Sprintf("%s[%d]", path, i), c)
			}
		}
	}
	for _, tool := range res.Tools {
		for name, s := range map[string]any{"inputSchema": tool.InputSchema, "outputSchema": tool.OutputSchema} {
			b, _ := json.Marshal(s)
			var m any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			walk(tool.Name, name, m)
		}
	}
}
