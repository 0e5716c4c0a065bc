package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report/reporttest"
)

// TestResultsLinkHome: no tool result, text or structured, links outside
// kubegap's repository and the sources the data cites: every page of a
// demo and preflight audit, every finding, every check explained in that
// audit, every case.
func TestResultsLinkHome(t *testing.T) {
	cs := connect(t, Options{})
	scan := func(name string, args any) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s(%v): %v %s", name, args, err, text(res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		if foreign := reporttest.ForeignLinks(text(res) + "\n" + string(b)); len(foreign) > 0 {
			t.Errorf("%s(%v) links to %v", name, args, foreign)
		}
		return res
	}
	for _, audit := range []map[string]any{{"demo": true}, {"demo": true, "target_version": "1.36"}} {
		var out AuditOutput
		b, _ := json.Marshal(scan(ToolAudit, audit).StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		for page := 2; (page-1)*out.PageSize < out.TotalFindings; page++ {
			scan(ToolAudit, map[string]any{"audit_id": out.AuditID, "page": page})
		}
		for i := 1; i <= out.TotalFindings; i++ {
			scan(ToolGetFinding, map[string]any{"audit_id": out.AuditID, "finding_id": fmt.Sprintf("F%d", i)})
		}
		for _, c := range checks.All() {
			scan(ToolExplainCheck, map[string]any{"id": c.ID, "audit_id": out.AuditID})
		}
	}
	scan(ToolListChecks, map[string]any{})
	scan(ToolSearchCases, map[string]any{"search": "glibc"})
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range lib.Cases() {
		scan(ToolGetCase, map[string]any{"id": c.ID})
	}
}
