package mcp

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks/upgrade"
)

// TestAuditTargetVersion: the MCP audit agrees with the CLI: a
// target_version past the tables is refused naming the newest known
// minor, and upgrade-preflight (in the checks enum) named without a
// target is reported not evaluated, not an unknown check (issue 28, 23).
func TestAuditTargetVersion(t *testing.T) {
	newest, err := upgrade.NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, Options{})
	if msg := callErr(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": "1.99"}); !strings.Contains(msg, "up to "+newest.MinorString()) {
		t.Errorf("target_version 1.99: %q", msg)
	}
	var out AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "checks": []string{"upgrade-preflight"}, "check_detail": true}, &out)
	if len(out.Checks) != 1 || out.Checks[0].ID != "upgrade-preflight" || out.Checks[0].Status != "not-evaluated" ||
		!strings.Contains(out.Checks[0].Reason, "target_version") {
		t.Errorf("upgrade-preflight without target_version: %+v", out.Checks)
	}
}
