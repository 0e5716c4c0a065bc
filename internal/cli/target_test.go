package cli

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks/upgrade"
	"github.com/kubegap/kubegap/internal/report"
)

// TestTargetVersionPastTheTables: --target-version past the newest minor
// kubegap's tables know is one error line and exit 2, with nothing on
// stdout (issue 28, defect 8b).
func TestTargetVersionPastTheTables(t *testing.T) {
	newest, err := upgrade.NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runKubegap(t, "audit", "--demo", "--target-version", "1.99")
	if code != ExitError || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 ||
		!strings.Contains(errOut, "up to "+newest.MinorString()) {
		t.Errorf("exit %d, %d bytes on stdout, stderr %q; want 2, nothing, one line naming %s", code, len(out), errOut, newest.MinorString())
	}
	if code, _, errOut := runKubegap(t, "audit", "--demo", "--target-version", newest.MinorString(), "-q"); code == ExitError {
		t.Errorf("--target-version %s: exit 2: %s", newest.MinorString(), errOut)
	}
}

// TestPreflightCheckWithoutTarget: --checks upgrade-preflight without
// --target-version runs and reports the check not evaluated with what it
// needs, instead of exit 2 "unknown check" (issue 23).
func TestPreflightCheckWithoutTarget(t *testing.T) {
	code, r, errOut := auditJSON(t, "--demo", "--checks", "upgrade-preflight")
	if code == ExitError || len(r.Checks) != 1 {
		t.Fatalf("exit %d, %d checks, stderr %q", code, len(r.Checks), errOut)
	}
	if c := r.Checks[0]; c.ID != "upgrade-preflight" || c.Status != report.NotEvaluated || !strings.Contains(c.Reason, "needs --target-version 1.N") {
		t.Errorf("%s %s %q", c.ID, c.Status, c.Reason)
	}
}
