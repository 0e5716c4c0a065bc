package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/checks"
)

// Wire budgets (issue 22 item 5): what one response costs on the wire, as
// the stdio transport writes it (one JSON-RPC message and a newline).
const (
	// auditPageBudget is the budget of an audit's later pages; page 1's is
	// PageBudget, which grows with the catalogue.
	auditPageBudget = 10 * 1024
	// listChecksPerCheck: list_checks has one row per check, so its
	// budget grows with the catalogue (20 KiB at the 64 checks it was
	// first set for), never with the text of a row.
	listChecksPerCheck = 320
)

// meter wraps the server's transport and records the size of every
// response it writes, encoded exactly as the stdio transport encodes it.
type meter struct {
	sdk.Transport
	mu    sync.Mutex
	sizes []int
}

func (m *meter) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := m.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &meteredConn{Connection: c, m: m}, nil
}

// last returns the size of the last response written.
func (m *meter) last() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sizes) == 0 {
		return 0
	}
	return m.sizes[len(m.sizes)-1]
}

type meteredConn struct {
	sdk.Connection
	m *meter
}

func (c *meteredConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if _, ok := msg.(*jsonrpc.Response); ok {
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			return err
		}
		c.m.mu.Lock()
		c.m.sizes = append(c.m.sizes, len(b)+1) // the stdio transport ends each message with \n
		c.m.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// connectMetered is connect with the server's responses metered.
func connectMetered(t *testing.T, opts Options) (*sdk.ClientSession, *meter) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := sdk.NewInMemoryTransports()
	m := &meter{Transport: serverT}
	done := make(chan error, 1)
	go func() { done <- NewServer(opts).Run(ctx, m) }()
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
	return cs, m
}

// demoDump writes the demo cluster's objects of the given kinds as one
// List, the shape of `kubectl get KINDS -A -o yaml`, and returns its path.
func demoDump(t *testing.T, kinds ...string) string {
	t.Helper()
	return demoDumpCopies(t, 1, kinds...)
}

// demoDumpCopies is demoDump with every namespaced object of the kinds
// repeated copies times under new names and UIDs (owner references
// follow), so that the findings about them repeat too.
func demoDumpCopies(t *testing.T, copies int, kinds ...string) string {
	t.Helper()
	files, err := filepath.Glob("../demo/cluster/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("demo files: %v %v", files, err)
	}
	var items []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			objs := []map[string]any{obj}
			if obj["kind"] == "List" {
				objs = nil
				list, _ := obj["items"].([]any)
				for _, it := range list {
					if m, ok := it.(map[string]any); ok {
						objs = append(objs, m)
					}
				}
			}
			for _, o := range objs {
				if k, _ := o["kind"].(string); !slices.Contains(kinds, k) {
					continue
				}
				items = append(items, o)
				meta, _ := o["metadata"].(map[string]any)
				if _, namespaced := meta["namespace"]; !namespaced {
					continue
				}
				for i := 1; i < copies; i++ {
					items = append(items, renamed(o, fmt.Sprintf("-c%d", i)))
				}
			}
		}
	}
	if len(items) == 0 {
		t.Fatalf("the demo has no objects of kinds %v", kinds)
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(p, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// renamed is a deep copy of obj with suffix added to its name, its UID and
// those of its owner references.
func renamed(obj map[string]any, suffix string) map[string]any {
	b, _ := json.Marshal(obj)
	var c map[string]any
	_ = json.Unmarshal(b, &c)
	bump := func(m map[string]any) {
		for _, k := range []string{"name", "uid"} {
			if v, ok := m[k].(string); ok {
				m[k] = v + suffix
			}
		}
	}
	meta, _ := c["metadata"].(map[string]any)
	bump(meta)
	refs, _ := meta["ownerReferences"].([]any)
	for _, r := range refs {
		if m, ok := r.(map[string]any); ok {
			bump(m)
		}
	}
	return c
}

// The kinds `kubectl get all` lists (its "all" category).
var getAllKinds = []string{"Pod", "ReplicationController", "Service", "DaemonSet", "Deployment", "ReplicaSet",
	"StatefulSet", "HorizontalPodAutoscaler", "Job", "CronJob"}

// TestWireBudgets keeps the first audit page and list_checks within their
// budgets on the wire, for the demo and for the partial dumps a first
// user pastes.
func TestWireBudgets(t *testing.T) {
	cs, m := connectMetered(t, Options{})
	inputs := []struct {
		name string
		args map[string]any
	}{
		{"demo", map[string]any{"demo": true}},
		{"nodes,pods,daemonsets", map[string]any{"files": []string{demoDump(t, "Node", "Pod", "DaemonSet")}}},
		{"get all", map[string]any{"files": []string{demoDump(t, getAllKinds...)}}},
		{"demo -n payments", map[string]any{"demo": true, "namespace": "payments"}},
		{"demo target 1.36", map[string]any{"demo": true, "target_version": "1.36"}},
	}
	for _, in := range inputs {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolAudit, Arguments: in.args})
		if err != nil || res.IsError {
			t.Fatalf("audit %s: %v %s", in.name, err, text(res))
		}
		n := m.last()
		var out AuditOutput
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		t.Logf("audit %s: %d bytes on the wire (%d of text), %d of %d findings", in.name, n, len(text(res)), len(out.Findings), out.TotalFindings)
		if n > PageBudget(len(checks.All())) {
			t.Errorf("audit %s: first page is %d bytes on the wire, budget %d", in.name, n, PageBudget(len(checks.All())))
		}
		if len(out.Findings) == 0 && out.TotalFindings > 0 {
			t.Errorf("audit %s: a first page with no finding of %d", in.name, out.TotalFindings)
		}
		noSecondCopy(t, "audit "+in.name, res)
		// The text stands on its own: every finding on the page by ID.
		for _, f := range out.Findings {
			if !strings.Contains(text(res), f.FindingID+" "+f.Severity+" "+f.Check) {
				t.Errorf("audit %s: the text does not name %s", in.name, f.FindingID)
			}
		}
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolListChecks, Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("list_checks: %v", err)
	}
	n := m.last()
	t.Logf("list_checks: %d bytes on the wire", n)
	if budget := listChecksPerCheck * len(checks.All()); n > budget {
		t.Errorf("list_checks is %d bytes on the wire, budget %d (%d a check)", n, budget, listChecksPerCheck)
	}
	noSecondCopy(t, "list_checks", res)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{ToolExplainCheck, map[string]any{"id": "host-binary-glibc"}},
		{ToolGetCase, map[string]any{"id": "azure-cni-v2-glibc"}},
		{ToolSearchCases, map[string]any{}},
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v", c.tool, err)
		}
		t.Logf("%s: %d bytes on the wire", c.tool, m.last())
		noSecondCopy(t, c.tool, res)
	}
}

// noSecondCopy: beside the structured content, the text is a summary,
// not the same JSON again.
func noSecondCopy(t *testing.T, what string, res *sdk.CallToolResult) {
	t.Helper()
	if res.StructuredContent == nil || len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, structured %v; want one text and the structured content", what, len(res.Content), res.StructuredContent != nil)
	}
	txt := text(res)
	var v any
	if json.Unmarshal([]byte(txt), &v) == nil {
		t.Errorf("%s: the text is JSON, a second copy of the payload", what)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if len(txt) == 0 || len(txt) >= len(b) {
		t.Errorf("%s: %d bytes of text for %d of structured content, want a shorter summary", what, len(txt), len(b))
	}
}

// TestWireBudgetLargeAudit: on an input with many findings, every page
// keeps the budget whatever page_size asks, and paging by number and by
// cursor walks the same findings, each once.
func TestWireBudgetLargeAudit(t *testing.T) {
	cs, m := connectMetered(t, Options{})
	dump := demoDumpCopies(t, 60, "Node", "Pod", "DaemonSet")
	var first AuditOutput
	call(t, cs, ToolAudit, map[string]any{"files": []string{dump}, "page_size": maxPageSize}, &first)
	if first.TotalFindings < 3*maxPageSize {
		t.Fatalf("%d findings, want a large audit", first.TotalFindings)
	}
	var byCursor []string
	page := first
	for i := 1; ; i++ {
		budget := auditPageBudget // later pages: findings only
		if i == 1 {
			budget = PageBudget(len(checks.All()))
		}
		if n := m.last(); n > budget {
			t.Errorf("page %d: %d bytes on the wire, budget %d", i, n, budget)
		}
		if page.Page != i || len(page.Findings) == 0 || len(page.Findings) > maxPageSize {
			t.Fatalf("page %d: numbered %d with %d findings", i, page.Page, len(page.Findings))
		}
		for _, f := range page.Findings {
			byCursor = append(byCursor, f.FindingID)
		}
		if page.NextCursor == "" {
			break
		}
		var next AuditOutput
		call(t, cs, ToolAudit, map[string]any{"cursor": page.NextCursor}, &next)
		var byNumber AuditOutput
		call(t, cs, ToolAudit, map[string]any{"audit_id": first.AuditID, "page": i + 1, "page_size": maxPageSize}, &byNumber)
		if fmt.Sprint(ids(next.Findings)) != fmt.Sprint(ids(byNumber.Findings)) || len(next.Coverage)+len(next.Checks)+len(next.Passed) != 0 {
			t.Fatalf("page %d by cursor %v, by number %v (overview only on page 1: %d %d %d)", i+1,
				ids(next.Findings), ids(byNumber.Findings), len(next.Coverage), len(next.Checks), len(next.Passed))
		}
		page = next
	}
	if len(byCursor) != first.TotalFindings || len(first.Findings) >= maxPageSize {
		t.Errorf("paging saw %d findings of %d; page 1 held %d (a page of %d would pass the budget)", len(byCursor), first.TotalFindings, len(first.Findings), maxPageSize)
	}
	seen := map[string]bool{}
	for _, id := range byCursor {
		if seen[id] {
			t.Errorf("%s on two pages", id)
		}
		seen[id] = true
	}
}

func ids(fs []FindingBrief) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.FindingID)
	}
	return out
}

// TestOlderClientsGetJSONText: a client that negotiated a protocol from
// before structured content (2025-03-26) gets the result as JSON text,
// as the spec's backwards-compatibility rule asks.
func TestOlderClientsGetJSONText(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serverT, clientT := sdk.NewInMemoryTransports()
	go func() { _ = NewServer(Options{}).Run(ctx, serverT) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "old", Version: "v0"}, nil).Connect(ctx, clientT, &sdk.ClientSessionOptions{ProtocolVersion: "2025-03-26"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-03-26" {
		t.Fatalf("negotiated %s", v)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: ToolAudit, Arguments: map[string]any{"demo": true}})
	if err != nil || res.IsError {
		t.Fatalf("audit: %v", err)
	}
	var out AuditOutput
	if err := json.Unmarshal([]byte(text(res)), &out); err != nil || out.AuditID == "" || len(out.Findings) == 0 {
		t.Errorf("text is not the page as JSON: %v %.200s", err, text(res))
	}
}
