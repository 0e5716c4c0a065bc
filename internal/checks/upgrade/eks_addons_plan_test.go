package upgrade_test

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/report"
)

// TestEKSAddonsInThePlan: through the engine, the EKS fixture's add-on
// updates are steps of the upgrade plan, the VPC CNI before the control
// plane and CoreDNS after it, each naming its finding and check.
func TestEKSAddonsInThePlan(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "eks-addons.yaml"))
	s.Source.ServerVersion = "v1.32.9-eks-1a2b3c4"
	v, _ := check.ParseKubeVersion("1.33")
	r := audit.Run(s, checks.All(), audit.Options{Target: &v})
	var cni, coredns *report.PlanStep
	plan := report.Plan(r)
	for i, st := range plan {
		switch {
		case strings.HasPrefix(st.Title, "EKS Amazon VPC CNI"):
			cni = &plan[i]
		case strings.HasPrefix(st.Title, "EKS CoreDNS v1.11.4"):
			coredns = &plan[i]
		}
	}
	if cni == nil || coredns == nil || cni.FindingID == "" || cni.Check != "upgrade-preflight" {
		t.Fatalf("plan lacks the add-on steps: %+v", plan)
	}
	if cni.Step > coredns.Step {
		t.Errorf("VPC CNI (before) is step %d, after CoreDNS (during) at step %d", cni.Step, coredns.Step)
	}
}
