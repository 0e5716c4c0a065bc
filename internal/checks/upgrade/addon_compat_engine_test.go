package upgrade_test

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func addonTitled(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, "is not tested on Kubernetes") || strings.Contains(f.Title, "kubeadm deploys") {
			out = append(out, f)
		}
	}
	return out
}

// TestAddonCompatPlainFilesPartial: through the audit engine, the gap
// fixture read as plain files (never a complete list of DaemonSets and
// Deployments) still names Calico at 1.30, but the rule is partial, not
// evaluated; without --target-version no add-on finding appears at all.
func TestAddonCompatPlainFilesPartial(t *testing.T) {
	load := func() *snapshot.Snapshot {
		s := checktest.Load(t, "cni-coredns.yaml")
		s.Source.ServerVersion = "v1.29.4"
		return s
	}
	v130 := check.KubeVersion{Major: 1, Minor: 30}
	preflight, ok := checks.Lookup("upgrade-preflight")
	if !ok {
		t.Fatal("no upgrade-preflight")
	}
	r := audit.Run(load(), []check.Check{preflight}, audit.Options{Target: &v130})
	if got := addonTitled(r.Findings); len(got) != 1 {
		t.Errorf("plain files at 1.30: %+v", got)
	}
	var rule *report.RuleResult
	for i := range r.Checks[0].Rules {
		if r.Checks[0].Rules[i].ID == "addon-compat" {
			rule = &r.Checks[0].Rules[i]
		}
	}
	if rule == nil || rule.Status != report.RulePartial {
		t.Errorf("plain files: addon-compat rule = %+v, want partial", rule)
	}
	plain := audit.Run(load(), []check.Check{preflight}, audit.Options{})
	if got := addonTitled(plain.Findings); len(got) != 0 {
		t.Errorf("without --target-version: %+v", got)
	}
}
