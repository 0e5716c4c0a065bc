package upgrade_test

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func preflightAt(t *testing.T, s *snapshot.Snapshot, target string) *report.Report {
	t.Helper()
	v, _ := check.ParseKubeVersion(target)
	pf, _ := checks.Lookup("upgrade-preflight")
	return audit.Run(s, []check.Check{pf}, audit.Options{Target: &v})
}

// TestPreflightAllAtTarget: a whole-cluster read (the managed AKS recipe
// dump: API server 1.34.7, every kubelet 1.34) preflighted to 1.34 proves
// the upgrade done. The check passes, no rule is skipped or partial, and
// the rules of both paths say they are done.
func TestPreflightAllAtTarget(t *testing.T) {
	s, err := snapshot.LoadPaths([]string{"../testdata/managed/aks"})
	if err != nil {
		t.Fatal(err)
	}
	r := preflightAt(t, s, "1.34")
	res := r.Checks[0]
	if res.Status != report.Pass {
		t.Errorf("status %s (%s), want pass: every node and the control plane are at 1.34", res.Status, res.Reason)
	}
	said := map[string]string{}
	for _, rr := range res.Rules {
		if rr.Status != report.RuleEvaluated {
			t.Errorf("rule %s %s: %s", rr.ID, rr.Status, rr.Reason)
		}
		said[rr.ID] = rr.Reason
	}
	if !strings.Contains(said["control-plane-path"], "control-plane path is done") || !strings.Contains(said["kubelet-skew-at-target"], "node path is done") {
		t.Errorf("rules do not say the upgrade is done: %v", said)
	}
	if len(r.Findings) != 0 || len(report.Plan(r)) != 0 {
		t.Errorf("findings %v, plan %+v for a finished upgrade", r.Findings, report.Plan(r))
	}
}

// TestPreflightAtTargetUnproven: the same nodes from plain files, which
// may not hold every node, cannot prove the node path done: the
// control-plane path stays skipped, and the note says why.
func TestPreflightAtTargetUnproven(t *testing.T) {
	s := checktest.Load(t, "aks-134-fips.yaml")
	s.Source.ServerVersion = "v1.34.9"
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.KubeletVersion = "v1.34.9"
	}
	r := preflightAt(t, s, "1.34")
	for _, rr := range r.Checks[0].Rules {
		if rr.ID == "control-plane-path" && (rr.Status != report.RuleSkipped || !strings.Contains(rr.Reason, "may not hold every node")) {
			t.Errorf("control-plane-path %s: %s", rr.Status, rr.Reason)
		}
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Title, "is done") {
			t.Errorf("done claimed from plain files: %s", f.Title)
		}
	}
}
