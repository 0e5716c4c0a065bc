package upgrade_test

import (
	"slices"
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

var v135 = check.KubeVersion{Major: 1, Minor: 35}

func cites(f finding.Finding, id string) bool { return slices.Contains(f.Cases, id) }

// TestAKSFoundingPreflight is issue 17's acceptance: an AKS cluster at 1.34
// with an Ubuntu 20.04 FIPS pool and the static installer has no high
// finding citing azure-cni-v2-glibc without --target-version; with 1.35 a
// high preflight finding cites it and names the 20.04 nodes and azure-cns,
// and the budget that would deadlock the drain is named.
func TestAKSFoundingPreflight(t *testing.T) {
	load := func() *snapshot.Snapshot {
		return func() *snapshot.Snapshot {
			s := checktest.Complete(checktest.Load(t, "aks-134-fips.yaml"))
			s.Source.ServerVersion = "v1.34.7"
			return s
		}()
	}

	all := checks.All()
	plain := audit.Run(load(), all, audit.Options{})
	for _, f := range plain.Findings {
		if f.Severity >= finding.High && cites(f, "azure-cni-v2-glibc") {
			t.Errorf("without --target-version: high finding citing %s: %s", "azure-cni-v2-glibc", f.Title)
		}
		if f.Preflight != "" {
			t.Errorf("without --target-version: preflight finding %s", f.Title)
		}
	}
	if slices.ContainsFunc(plain.Checks, func(c report.CheckResult) bool { return c.ID == "upgrade-preflight" }) {
		t.Error("upgrade-preflight ran without --target-version")
	}

	pre := audit.Run(load(), all, audit.Options{Target: &v135})
	var glibc, drain, cgroup *finding.Finding
	for i, f := range pre.Findings {
		switch {
		case f.Check == "upgrade-preflight" && cites(f, "azure-cni-v2-glibc") && f.Severity == finding.High:
			glibc = &pre.Findings[i]
		case f.Check == "upgrade-preflight" && strings.Contains(f.Title, "PodDisruptionBudget payments/checkout"):
			drain = &pre.Findings[i]
		case f.Check == "upgrade-preflight" && cites(f, "k3s-135-kubelet-refuses-cgroup-v1-2026"):
			cgroup = &pre.Findings[i]
		}
	}
	if glibc == nil {
		t.Fatalf("no high preflight finding citing %s: %+v", "azure-cni-v2-glibc", pre.Findings)
	}
	if glibc.Preflight != finding.PreflightBefore || !checktest.HasObject([]finding.Finding{*glibc}, "DaemonSet", "kube-system", "azure-cns") ||
		!checktest.HasObject([]finding.Finding{*glibc}, "Node", "", "aks-fips2004-12345678-vmss000000") ||
		!checktest.HasObject([]finding.Finding{*glibc}, "Node", "", "aks-fips2004-12345678-vmss000001") ||
		checktest.HasObject([]finding.Finding{*glibc}, "Node", "", "aks-system-12345678-vmss000000") {
		t.Errorf("glibc finding names the wrong objects or phase: %+v", glibc)
	}
	if !strings.Contains(strings.Join(glibc.Evidence, "\n"), "not inspected") {
		t.Errorf("without --inspect-images the finding must say it used the table: %v", glibc.Evidence)
	}
	if drain == nil || drain.Preflight != finding.PreflightDuring {
		t.Errorf("the budget that deadlocks the drain is not named: %+v", drain)
	}
	if cgroup == nil || !checktest.HasObject([]finding.Finding{*cgroup}, "Node", "", "aks-fips2004-12345678-vmss000000") ||
		checktest.HasObject([]finding.Finding{*cgroup}, "Node", "", "aks-system-12345678-vmss000000") {
		t.Errorf("Ubuntu 20.04 boots cgroup v1, which kubelet 1.35 refuses: %+v", cgroup)
	}

	// With --inspect-images the inspected need replaces the table's.
	s := load()
	ctx := &check.Context{Snapshot: s, Target: &v135, Images: map[string]check.ImageFacts{
		"mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11": {LayersRead: true, MaxGlibc: "2.34", Executables: []string{"/usr/bin/dropgz!azure-vnet: GLIBC_2.34"}},
	}}
	pf, _ := checks.Lookup("upgrade-preflight")
	fs, err := pf.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(fs, func(f finding.Finding) bool { return cites(f, "azure-cni-v2-glibc") }); i < 0 ||
		!strings.Contains(strings.Join(fs[i].Evidence, "\n"), "--inspect-images") {
		t.Errorf("inspected facts not used: %+v", fs)
	}
}
