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

// TestTargetVersionNumber: target_version may come as a JSON number, as
// MCP Inspector's CLI sends target_version=1.36; it is the same audit as
// the string. A number that may have lost a trailing zero (1.4 for 1.40)
// is refused with the string to send, and so is one that is no minor.
func TestTargetVersionNumber(t *testing.T) {
	cs := connect(t, Options{})
	var asString, asNumber AuditOutput
	call(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": "1.36"}, &asString)
	call(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": 1.36}, &asNumber)
	if len(asNumber.Plan) == 0 || len(asNumber.Plan) != len(asString.Plan) || asNumber.TotalFindings != asString.TotalFindings {
		t.Errorf("target_version 1.36 as a number: %d plan steps, %d findings; as a string: %d, %d",
			len(asNumber.Plan), asNumber.TotalFindings, len(asString.Plan), asString.TotalFindings)
	}
	for _, bad := range []any{1.4, 1.3, 1.0, 1, 2.5} {
		msg := callErr(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": bad})
		if !strings.Contains(msg, "trailing zero") || !strings.Contains(msg, `as a string`) {
			t.Errorf("target_version %v: %q", bad, msg)
		}
	}
	if msg := callErr(t, cs, ToolAudit, map[string]any{"demo": true, "target_version": true}); !strings.Contains(msg, "target_version") {
		t.Errorf("target_version true: %q", msg)
	}
}
