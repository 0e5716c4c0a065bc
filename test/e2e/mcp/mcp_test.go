// Package mcp_test drives the real kubegap binary as an MCP server over
// stdio, the way Claude Code and Codex run it: offline sources, paging,
// bad input, and a live audit of the real test-bed API server.
package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// syncBuffer collects a subprocess's stderr for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serve starts 'kubegap mcp args...' as a subprocess and connects an MCP
// client to it over its stdin and stdout.
func serve(t *testing.T, bin string, env []string, args ...string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	cmd := exec.CommandContext(ctx, bin, append([]string{"mcp"}, args...)...)
	// A kubeconfig the test did not choose must never be read.
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "no-kubeconfig"))
	cmd.Env = append(cmd.Env, env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubegap-e2e", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		cancel()
		t.Fatalf("starting kubegap mcp %v: %v\nstderr:\n%s", args, err, stderr.String())
	}
	t.Cleanup(func() {
		if err := cs.Close(); err != nil {
			t.Logf("closing the session: %v", err)
		}
		cancel()
		if t.Failed() {
			t.Logf("kubegap mcp %v stderr:\n%s", args, stderr.String())
		}
	})
	return cs
}

// call calls a tool that must succeed, decodes its structured output into
// out, and returns the structured JSON and the size of the whole result.
func call(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any, out any) (structured []byte, whole int) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error: %v", tool, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", tool, args, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	all, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decoding %s: %v", tool, b, err)
		}
	}
	return b, len(all)
}

// callErr calls a tool that must answer with a tool error, and returns
// its text.
func callErr(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error, want a tool error: %v", tool, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want a tool error", tool, args)
	}
	return resultText(res)
}

func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// The shapes the test reads from tool output: only the fields it checks,
// decoded from JSON as any client would, not the server's Go types.
type (
	auditPage struct {
		AuditID string `json:"audit_id"`
		Source  struct {
			Type    string `json:"type"`
			Context string `json:"context"`
		} `json:"source"`
		Checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Reason string `json:"reason"`
		} `json:"checks"`
		Findings      []briefFinding `json:"findings"`
		TotalFindings int            `json:"total_findings"`
		NextPage      int            `json:"next_page"`
		NextCursor    string         `json:"next_cursor"`
	}
	briefFinding struct {
		FindingID string   `json:"finding_id"`
		Check     string   `json:"check"`
		Severity  string   `json:"severity"`
		Title     string   `json:"title"`
		Objects   []string `json:"objects"`
		Cases     []string `json:"cases"`
	}
	fullFinding struct {
		FindingID string `json:"finding_id"`
		Check     string `json:"check"`
		Message   string `json:"message"`
		Objects   []struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"objects"`
		Evidence    []string `json:"evidence"`
		Remediation string   `json:"remediation"`
		Cases       []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"cases"`
	}
)

const pullAlwaysCase = "daemonset-pull-always-nat-ratelimit"

func TestMCPOverStdio(t *testing.T) {
	bin := testcluster.Kubegap(t)
	cs := serve(t, bin, nil)

	t.Run("initialize", func(t *testing.T) {
		ir := cs.InitializeResult()
		if ir == nil || ir.ServerInfo == nil || ir.ServerInfo.Name != "kubegap" {
			t.Fatalf("initialize result %+v", ir)
		}
		if ir.Capabilities == nil || ir.Capabilities.Tools == nil {
			t.Errorf("server does not advertise tools: %+v", ir.Capabilities)
		}
		if !strings.Contains(ir.Instructions, "read-only") {
			t.Errorf("instructions do not state the read-only promise: %q", ir.Instructions)
		}
	})

	t.Run("tools are read-only", func(t *testing.T) {
		names := listTools(t, cs)
		for _, want := range []string{"audit", "get_finding", "list_checks", "explain_check", "search_cases", "get_case"} {
			if _, ok := names[want]; !ok {
				t.Errorf("tool %s missing (have %v)", want, keys(names))
			}
		}
		if _, ok := names["inspect_image"]; ok {
			t.Error("inspect_image is registered without --allow-registry")
		}
		for name, tool := range names {
			if tool.OpenWorldHint == nil || *tool.OpenWorldHint {
				t.Errorf("%s: openWorldHint %v, want false", name, tool.OpenWorldHint)
			}
		}
	})

	t.Run("allow-registry adds inspect_image", func(t *testing.T) {
		names := listTools(t, serve(t, bin, nil, "--allow-registry"))
		tool, ok := names["inspect_image"]
		if !ok {
			t.Fatalf("inspect_image missing with --allow-registry (have %v)", keys(names))
		}
		if tool.OpenWorldHint == nil || !*tool.OpenWorldHint {
			t.Error("inspect_image: openWorldHint is not true, but it contacts registries")
		}
	})

	t.Run("audit a file", func(t *testing.T) {
		var page auditPage
		call(t, cs, "audit", map[string]any{"files": []string{filepath.Join("testdata", "pull-always.yaml")}}, &page)
		if page.Source.Type != "files" {
			t.Errorf("source type %q, want files", page.Source.Type)
		}
		f := findingFor(page, "image-pull-always", "mcp-log-agent")
		if f == nil {
			t.Fatalf("no image-pull-always finding on mcp-log-agent in %+v", page.Findings)
		}
		if !contains(f.Cases, pullAlwaysCase) {
			t.Errorf("finding cites %v, want %s", f.Cases, pullAlwaysCase)
		}
	})

	var demo auditPage
	t.Run("audit the demo in small pages", func(t *testing.T) {
		raw, whole := call(t, cs, "audit", map[string]any{"demo": true}, &demo)
		t.Logf("first demo page: %d bytes of structured JSON, %d bytes as a whole tools/call result; %d of %d findings",
			len(raw), whole, len(demo.Findings), demo.TotalFindings)
		if len(raw) > 8192 {
			t.Errorf("first demo page is %d bytes of JSON, want at most 8192", len(raw))
		}
		if demo.TotalFindings <= len(demo.Findings) || demo.NextCursor == "" {
			t.Fatalf("the demo should need more than one page: %d findings, next_cursor %q", demo.TotalFindings, demo.NextCursor)
		}
		seen := map[string]bool{}
		all := append([]briefFinding{}, demo.Findings...)
		page := demo
		for page.NextCursor != "" {
			var next auditPage
			call(t, cs, "audit", map[string]any{"cursor": page.NextCursor}, &next)
			if len(next.Findings) == 0 {
				t.Fatal("a page with a next_cursor led to an empty page")
			}
			all = append(all, next.Findings...)
			if len(all) > demo.TotalFindings {
				t.Fatalf("paging yields more findings (%d) than total_findings (%d)", len(all), demo.TotalFindings)
			}
			page = next
		}
		if len(all) != demo.TotalFindings {
			t.Errorf("paged through %d findings, total_findings is %d", len(all), demo.TotalFindings)
		}
		for _, f := range all {
			if seen[f.FindingID] {
				t.Errorf("finding_id %s seen twice", f.FindingID)
			}
			seen[f.FindingID] = true
			if len(f.Cases) == 0 {
				t.Errorf("%s cites no case", f.FindingID)
			}
		}
	})

	t.Run("get_finding and get_case", func(t *testing.T) {
		if demo.AuditID == "" {
			t.Skip("the demo audit failed")
		}
		b := demo.Findings[0]
		var f fullFinding
		call(t, cs, "get_finding", map[string]any{"audit_id": demo.AuditID, "finding_id": b.FindingID}, &f)
		if f.FindingID != b.FindingID || f.Check != b.Check || f.Message == "" || f.Remediation == "" || len(f.Evidence) == 0 {
			t.Errorf("get_finding %s: %+v", b.FindingID, f)
		}
		if len(f.Objects) < len(b.Objects) || len(f.Cases) != len(b.Cases) {
			t.Errorf("get_finding has %d objects, %d cases; the page showed %d, %d", len(f.Objects), len(f.Cases), len(b.Objects), len(b.Cases))
		}
		var c struct {
			ID         string                 `json:"id"`
			Title      string                 `json:"title"`
			RootCause  struct{ Text string }  `json:"rootCause"`
			Sources    []struct{ URL string } `json:"sources"`
			DetectedBy []struct{ ID string }  `json:"detected_by"`
		}
		call(t, cs, "get_case", map[string]any{"id": f.Cases[0].ID}, &c)
		if c.ID != f.Cases[0].ID || c.Title != f.Cases[0].Title || c.RootCause.Text == "" || len(c.Sources) == 0 {
			t.Errorf("get_case %s: %+v", f.Cases[0].ID, c)
		}
		var detected bool
		for _, d := range c.DetectedBy {
			detected = detected || d.ID == f.Check
		}
		if !detected {
			t.Errorf("get_case %s: detected_by %v does not name %s, whose finding cites it", c.ID, c.DetectedBy, f.Check)
		}
	})

	t.Run("search_cases with a facet", func(t *testing.T) {
		type result struct {
			Total int `json:"total"`
			Cases []struct {
				ID string `json:"id"`
			} `json:"cases"`
			Facets []struct {
				Name   string `json:"name"`
				Values []struct {
					ID       string `json:"id"`
					Count    int    `json:"count"`
					Selected bool   `json:"selected"`
				} `json:"values"`
			} `json:"facets"`
		}
		var all result
		call(t, cs, "search_cases", map[string]any{}, &all)
		var facetID string
		var count int
		for _, f := range all.Facets {
			if f.Name == "symptom" && len(f.Values) > 0 {
				facetID, count = f.Values[0].ID, f.Values[0].Count
			}
		}
		if facetID == "" {
			t.Fatalf("no symptom facet values in %+v", all.Facets)
		}
		var narrowed result
		call(t, cs, "search_cases", map[string]any{"symptom": []string{facetID}, "limit": 50}, &narrowed)
		if narrowed.Total != count || len(narrowed.Cases) != min(count, 50) {
			t.Errorf("symptom %s: total %d, %d cases; the facet count said %d", facetID, narrowed.Total, len(narrowed.Cases), count)
		}
		if narrowed.Total >= all.Total && count < all.Total {
			t.Errorf("symptom %s did not narrow %d cases", facetID, all.Total)
		}
	})

	t.Run("bad input is a tool error and the server keeps serving", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			tool string
			args map[string]any
			want string
		}{
			{"unknown check", "audit", map[string]any{"demo": true, "checks": []string{"verison-skew"}}, `unknown check "verison-skew"; did you mean version-skew?`},
			{"bad facet", "search_cases", map[string]any{"root_cause": []string{"gremlins"}}, `/root_cause/items: enum: gremlins`},
			{"missing file", "audit", map[string]any{"files": []string{"testdata/does-not-exist.yaml"}}, "does-not-exist.yaml"},
			{"huge page size", "audit", map[string]any{"demo": true, "page_size": 100000}, "/page_size: maximum"},
			{"zero page size", "audit", map[string]any{"demo": true, "page_size": 0}, "/page_size: minimum"},
			{"unknown audit_id", "get_finding", map[string]any{"audit_id": "A42-ffffff", "finding_id": "F1"}, `unknown audit_id "A42-ffffff"`},
			{"no kubeconfig", "audit", map[string]any{}, "kubeconfig"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if msg := callErr(t, cs, tc.tool, tc.args); !strings.Contains(msg, tc.want) {
					t.Errorf("error %q does not mention %q", msg, tc.want)
				}
			})
		}
		if err := cs.Ping(context.Background(), nil); err != nil {
			t.Fatalf("ping after bad input: %v", err)
		}
		var checks struct {
			Checks []struct{ ID string } `json:"checks"`
		}
		call(t, cs, "list_checks", map[string]any{}, &checks)
		if len(checks.Checks) == 0 {
			t.Error("list_checks is empty after bad input")
		}
	})
}

func TestMCPLiveAudit(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	c.LoadYAMLInto(t, ns, filepath.Join("testdata", "pull-always.yaml"))
	kubeconfig := c.Kubeconfig(t, testcluster.UserReader)
	bin := testcluster.Kubegap(t)

	t.Run("finds the gap through MCP", func(t *testing.T) {
		cs := serve(t, bin, nil, "--kubeconfig", kubeconfig)
		m := c.Mark(t)
		var page auditPage
		call(t, cs, "audit", map[string]any{"namespace": ns, "checks": []string{"image-pull-always"}}, &page)
		if page.Source.Type != "cluster" || page.Source.Context != "testbed-"+testcluster.UserReader {
			t.Errorf("source %+v, want cluster testbed-%s", page.Source, testcluster.UserReader)
		}
		if len(page.Checks) != 1 || page.Checks[0].Status != "fail" {
			t.Fatalf("checks %+v, want image-pull-always failing", page.Checks)
		}
		f := findingFor(page, "image-pull-always", "DaemonSet/"+ns+"/mcp-log-agent")
		if f == nil {
			t.Fatalf("no finding on DaemonSet %s/mcp-log-agent in %+v", ns, page.Findings)
		}
		if !contains(f.Cases, pullAlwaysCase) {
			t.Errorf("finding cites %v, want %s", f.Cases, pullAlwaysCase)
		}
		var full fullFinding
		call(t, cs, "get_finding", map[string]any{"audit_id": page.AuditID, "finding_id": f.FindingID}, &full)
		var pod bool
		for _, o := range full.Objects {
			pod = pod || (o.Kind == "Pod" && o.Namespace == ns && o.Name == "mcp-log-agent-x1")
		}
		if !pod {
			t.Errorf("the crash-looping pod is not among the finding's objects: %+v", full.Objects)
		}

		// The read-only promise, from the API server's own audit log:
		// reads of the catalogue only, in the namespace asked for.
		if testcluster.CheckRequests(t, c.RequestsSince(t, m, testcluster.UserReader), testcluster.Allow{Namespace: ns}) == 0 {
			t.Fatal("the audit log shows no request from the reader")
		}
	})

	t.Run("a hostile namespace sends nothing", func(t *testing.T) {
		cs := serve(t, bin, nil, "--kubeconfig", kubeconfig)
		m := c.Mark(t)
		for _, hostile := range []string{"../nodes/node-a/proxy", "kube-system/services/http:kube-dns:53/proxy", "../../x"} {
			if msg := callErr(t, cs, "audit", map[string]any{"namespace": hostile}); !strings.Contains(msg, "is not a namespace name") {
				t.Errorf("namespace %q: error %q, want it refused", hostile, msg)
			}
		}
		if reqs := c.RequestsSince(t, m, testcluster.UserReader); len(reqs) != 0 {
			t.Errorf("hostile namespaces reached the API server: %d requests, first %s %s", len(reqs), reqs[0].Verb, reqs[0].RequestURI)
		}
	})

	t.Run("allow-context refuses the test bed", func(t *testing.T) {
		cs := serve(t, bin, nil, "--kubeconfig", kubeconfig, "--allow-context", "other")
		m := c.Mark(t)
		msg := callErr(t, cs, "audit", map[string]any{"namespace": ns})
		if !strings.Contains(msg, `"testbed-reader" refused`) || !strings.Contains(msg, `"other"`) {
			t.Errorf("error %q should refuse testbed-reader and name the allowed context", msg)
		}
		msg = callErr(t, cs, "audit", map[string]any{"context": "testbed-reader"})
		if !strings.Contains(msg, "refused") {
			t.Errorf("naming the context explicitly was not refused: %q", msg)
		}
		if reqs := c.RequestsSince(t, m, testcluster.UserReader); len(reqs) != 0 {
			t.Errorf("a refused context was contacted: %d requests, first %s %s", len(reqs), reqs[0].Verb, reqs[0].RequestURI)
		}
		// Still serving offline sources.
		var page auditPage
		call(t, cs, "audit", map[string]any{"demo": true, "page_size": 1}, &page)
	})
}

// listTools returns the server's tools by name with their annotations.
func listTools(t *testing.T, cs *sdk.ClientSession) map[string]*sdk.ToolAnnotations {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]*sdk.ToolAnnotations{}
	for _, tool := range res.Tools {
		a := tool.Annotations
		if a == nil || !a.ReadOnlyHint || a.DestructiveHint == nil || *a.DestructiveHint || !a.IdempotentHint {
			t.Errorf("%s: annotations %+v, want readOnly, not destructive, idempotent", tool.Name, a)
			a = &sdk.ToolAnnotations{}
		}
		out[tool.Name] = a
	}
	return out
}

// findingFor returns the first finding of check with an object whose
// name contains obj.
func findingFor(page auditPage, check, obj string) *briefFinding {
	for i, f := range page.Findings {
		if f.Check != check {
			continue
		}
		for _, o := range f.Objects {
			if strings.Contains(o, obj) {
				return &page.Findings[i]
			}
		}
	}
	return nil
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func keys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
