package mcp

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditProviderOwned: on the fresh EKS fixture the audit page marks
// AWS's add-on with its owner, get_finding carries the owner, and
// ignore_provider_owned leaves it out and counts it.
func TestAuditProviderOwned(t *testing.T) {
	cs := connect(t, Options{})
	dir, err := filepath.Abs("../checks/testdata/managed/eks")
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"files": []string{dir}, "checks": []string{"image-pull-always"}}
	var out AuditOutput
	call(t, cs, ToolAudit, args, &out)
	if len(out.Findings) != 1 || !strings.HasPrefix(out.Findings[0].Owner, "managed by EKS: not fixable in the cluster;") {
		t.Fatalf("want the eks-pod-identity-agent finding marked, got %+v", out.Findings)
	}
	var detail FindingDetail
	call(t, cs, ToolGetFinding, map[string]any{"audit_id": out.AuditID, "finding_id": out.Findings[0].FindingID}, &detail)
	if detail.Owner == nil || detail.Owner.Provider != "EKS" || len(detail.Owner.Sources) == 0 {
		t.Errorf("get_finding owner %+v", detail.Owner)
	}
	args["ignore_provider_owned"] = true
	var hidden AuditOutput
	call(t, cs, ToolAudit, args, &hidden)
	if len(hidden.Findings) != 0 || hidden.ProviderOwnedHidden != 1 {
		t.Errorf("ignore_provider_owned: %d findings, %d hidden; want 0 and 1", len(hidden.Findings), hidden.ProviderOwnedHidden)
	}
}
