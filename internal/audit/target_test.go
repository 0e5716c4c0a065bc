package audit

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/checks/upgrade"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/report"
)

// TestParseTargetRefusesPastTheTables is issue 28's defect 8b: a target
// past the newest minor kubegap's tables know is refused, with one line
// naming that minor; up to it (any patch) is read.
func TestParseTargetRefusesPastTheTables(t *testing.T) {
	newest, err := upgrade.NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	past := check.KubeVersion{Major: 1, Minor: newest.Minor + 1}
	for _, s := range []string{newest.MinorString(), "v" + newest.MinorString() + ".9", "1.35"} {
		if v, err := ParseTarget("--target-version", s); err != nil || v == nil {
			t.Errorf("ParseTarget(%q) = %v, %v; want it read", s, v, err)
		}
	}
	for _, s := range []string{past.MinorString(), "1.99", "v1.99.0"} {
		_, err := ParseTarget("--target-version", s)
		if err == nil || !strings.Contains(err.Error(), "up to "+newest.MinorString()) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseTarget(%q) err = %v; want one line naming %s", s, err, newest.MinorString())
		}
	}
	for _, s := range []string{"2.0", "x", "1"} {
		if _, err := ParseTarget("target_version", s); err == nil || !strings.HasPrefix(err.Error(), "target_version ") {
			t.Errorf("ParseTarget(%q) err = %v; want a target_version error", s, err)
		}
	}
	if v, err := ParseTarget("--target-version", ""); v != nil || err != nil {
		t.Errorf("no target: %v, %v", v, err)
	}
}

// TestChoosePreflightWithoutTarget is issue 23's report: --checks
// upgrade-preflight without --target-version was "unknown check" (exit 2)
// because the preflight checks were dropped before the IDs were checked.
// Named, it runs and is not evaluated, saying which target to give;
// unnamed, it is left out as before; with a target it runs.
func TestChoosePreflightWithoutTarget(t *testing.T) {
	all := checks.All()
	cs, err := Choose(all, []string{"upgrade-preflight"}, nil, nil)
	if err != nil || len(cs) != 1 {
		t.Fatalf("Choose(upgrade-preflight) = %d checks, %v", len(cs), err)
	}
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	cp, _, _ := check.ServerVersion(s)
	next := check.KubeVersion{Major: cp.Major, Minor: cp.Minor + 1}
	res := Run(s, cs, Options{}).Checks[0]
	if res.ID != "upgrade-preflight" || res.Status != report.NotEvaluated ||
		!strings.Contains(res.Reason, "needs --target-version 1.N") || !strings.Contains(res.Reason, "--target-version "+next.MinorString()) {
		t.Errorf("upgrade-preflight without a target: %s %q", res.Status, res.Reason)
	}
	plain, err := Choose(all, nil, nil, nil)
	if err != nil || len(plain) != len(ForTarget(all, nil)) {
		t.Errorf("no --checks, no target: %d checks, %v; want %d (no preflight)", len(plain), err, len(ForTarget(all, nil)))
	}
	if _, err := Choose(all, []string{"upgrade-preflght"}, nil, nil); err == nil || !strings.Contains(err.Error(), "did you mean upgrade-preflight") {
		t.Errorf("a mistyped preflight ID: err %v; want the preflight ID among the nearest", err)
	}
	// By prefix and in capitals it is still the preflight check asked for.
	byPrefix, err := Choose(all, []string{"UPGRADE-PRE"}, nil, nil)
	if err != nil || len(byPrefix) != 1 || byPrefix[0].ID != "upgrade-preflight" || byPrefix[0].Preflight {
		t.Errorf("--checks UPGRADE-PRE without a target: %+v, %v; want upgrade-preflight, not evaluated", byPrefix, err)
	}
	withTarget, err := Choose(all, []string{"upgrade-preflight"}, nil, &next)
	if err != nil || len(withTarget) != 1 || !withTarget[0].Preflight {
		t.Fatalf("with a target: %+v, %v", withTarget, err)
	}
	if got := Run(s, withTarget, Options{Target: &next}).Checks[0]; got.Status == report.NotEvaluated {
		t.Errorf("with --target-version %s: %s %q", next.MinorString(), got.Status, got.Reason)
	}
}
