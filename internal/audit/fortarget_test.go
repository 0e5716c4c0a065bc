package audit

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/report"
)

// TestPreflightNamedWithoutTarget: --checks upgrade-preflight without
// --target-version runs the check, which says it needs a target (not
// evaluated, and a warning); not named, it does not run at all.
func TestPreflightNamedWithoutTarget(t *testing.T) {
	if cs := ForTarget(checks.All(), nil); hasCheck(cs, "upgrade-preflight") {
		t.Error("upgrade-preflight kept without a target and without being named")
	}
	cs, err := Select(ForTarget(checks.All(), nil, "upgrade-preflight"), []string{"upgrade-preflight"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := Run(s, cs, Options{Named: []string{"upgrade-preflight"}})
	if len(r.Checks) != 1 || r.Checks[0].Status != report.NotEvaluated || !strings.Contains(r.Checks[0].Reason, "needs --target-version") {
		t.Fatalf("checks = %+v", r.Checks)
	}
	if !strings.Contains(strings.Join(r.Warnings, "\n"), "upgrade-preflight needs --target-version") {
		t.Errorf("warnings = %v", r.Warnings)
	}
}

func hasCheck(cs []checks.Check, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}
