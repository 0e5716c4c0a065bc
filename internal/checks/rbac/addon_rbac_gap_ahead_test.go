package rbac

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// CoreDNS 1.8.0 with the old role works today: the before-upgrade rule
// reports it at low, naming the missing verbs and the release that needs
// them; the rule for running releases says nothing.
func TestAddonRBACBeforeUpgrade(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/before-upgrade.yaml"))
	fs, ctx, ok := checktest.Run(t, addonRBACGapCheck(), s)
	if !ok || len(ctx.Notes()) != 0 || len(fs) != 1 {
		t.Fatalf("evaluated %v, notes %v, findings %+v, want one", ok, ctx.Notes(), fs)
	}
	f := fs[0]
	if f.Rule != ruleAddonRBACAhead || f.Severity != finding.Low || f.Cases[0] != caseCoreDNSRBAC ||
		!strings.Contains(f.Title, "list endpointslices.discovery.k8s.io") || !strings.Contains(f.Title, "CoreDNS 1.8.1 and later") {
		t.Errorf("finding %+v", f)
	}
	if !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") {
		t.Errorf("objects %+v", f.Objects)
	}
}

// The same 1.8.0 with the role the new releases ship is quiet.
func TestAddonRBACBeforeUpgradeGranted(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "addon-rbac-gap/before-upgrade.yaml"))
	for i := range s.ClusterRoles {
		if s.ClusterRoles[i].Name == "system:coredns" {
			s.ClusterRoles[i].Rules[0].Resources = append(s.ClusterRoles[i].Rules[0].Resources, "endpointslices")
			s.ClusterRoles[i].Rules[0].APIGroups = append(s.ClusterRoles[i].Rules[0].APIGroups, "discovery.k8s.io")
		}
	}
	checktest.Quiet(t, addonRBACGapCheck(), s)
}
