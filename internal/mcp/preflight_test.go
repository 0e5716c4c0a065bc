package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAuditPreflightPlan: with target_version, page 1 carries the current
// version and the upgrade plan, whose steps name findings get_finding
// opens; the demo's 1.36 plan holds the payments/checkout budget and the
// glibc breakage. Without target_version there is neither.
func TestAuditPreflightPlan(t *testing.T) {
	cs := connect(t, Options{})
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": "1.36"}, &out)
	if out.CurrentVersion == nil || out.CurrentVersion.Version != "1.35" || out.CurrentVersion.Inferred {
		t.Errorf("current_version = %+v", out.CurrentVersion)
	}
	if len(out.Plan) == 0 {
		t.Fatal("no plan")
	}
	var budget, glibc bool
	for _, st := range out.Plan {
		if !strings.HasPrefix(st.FindingID, "F") || st.Check == "" || (st.Phase != "before" && st.Phase != "during") {
			t.Errorf("step %+v", st)
		}
		budget = budget || slices.Contains(st.Objects, "PodDisruptionBudget/payments/checkout")
		glibc = glibc || slices.Contains(st.Objects, "DaemonSet/kube-system/azure-cns") && strings.Contains(st.Title, "glibc")
	}
	if !budget || !glibc {
		t.Errorf("plan without the budget (%v) or the glibc breakage (%v): %+v", budget, glibc, out.Plan)
	}
	var f map[string]any
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": out.AuditID, "finding_id": out.Plan[0].FindingID}, &f)

	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: ToolAudit, Arguments: map[string]any{"demo": true, "target_version": "1.36"}})
	if err != nil || !strings.Contains(text(res), "Upgrade preflight: current version 1.35 (stated). Plan") {
		t.Errorf("the text does not state the version and plan: %v %s", err, text(res))
	}

	var plain AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true}, &plain)
	if plain.CurrentVersion != nil || plain.Plan != nil {
		t.Errorf("a plan without target_version: %+v %+v", plain.CurrentVersion, plain.Plan)
	}
}
