package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Rook v1.16.4 lists Kubernetes 1.27 to 1.32, Trident 24.10.1 its own range
// (testdata/csi-drivers.yaml): on a 1.33 cluster both are outside now,
// high, and not marked as preflight findings; on 1.30 both list it.
func TestAddonVersionCompatNewerCluster(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.33.2")
	fs, ctx, ok := checktest.Run(t, addonVersionCompatCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if !checktest.HasObject(fs, "Deployment", "rook-ceph", "rook-ceph-operator") {
		t.Errorf("Rook v1.16.4 on 1.33 not named: %+v", fs)
	}
	for _, f := range fs {
		if f.Severity != finding.High || f.Preflight != "" || f.Check != addonVersionID ||
			!strings.Contains(f.Title, "which the cluster runs") || !strings.Contains(f.Title, "up to") {
			t.Errorf("finding %v %q (preflight %q, check %s), want high, not preflight, about the running minor",
				f.Severity, f.Title, f.Preflight, f.Check)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v on a complete read of tabled releases", n)
	}

	s = at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.30.6")
	if fs, _, _ := checktest.Run(t, addonVersionCompatCheck(), s); len(fs) != 0 {
		t.Errorf("on 1.30, which both releases list: %+v", fs)
	}
}

// A release whose list starts above the running minor is outside too: Rook
// v1.16.4 on a 1.26 cluster supports Kubernetes from 1.27.
func TestAddonVersionCompatOlderCluster(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "csi-drivers.yaml")), "v1.26.15")
	fs, _, _ := checktest.Run(t, addonVersionCompatCheck(), s)
	found := false
	for _, f := range fs {
		if checktest.HasObject([]finding.Finding{f}, "Deployment", "rook-ceph", "rook-ceph-operator") {
			found = strings.Contains(f.Title, "from 1.27")
		}
	}
	if !found {
		t.Errorf("Rook v1.16.4 on 1.26 not reported as supporting Kubernetes from 1.27: %+v", fs)
	}
}

// Without a server version (plain files) the rule cannot judge: skipped,
// never a pass.
func TestAddonVersionCompatNoServerVersion(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "csi-drivers.yaml"))
	s.Source.ServerVersion = ""
	fs, ctx, _ := checktest.Run(t, addonVersionCompatCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings without a version: %+v", fs)
	}
	if _, noted := ctx.Notes()[ruleAddonVersion]; !noted {
		t.Errorf("rule %s not marked skipped or partial without a server version: %v", ruleAddonVersion, ctx.Notes())
	}
}

// Calico and Cilium on 1.31 (testdata/cni-coredns.yaml): the tested-on
// basis reads medium against the running minor as against a target, and
// managed builds stay unjudged.
func TestAddonVersionCompatTested(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "cni-coredns.yaml")), "v1.31.2")
	fs, _, _ := checktest.Run(t, addonVersionCompatCheck(), s)
	if len(fs) == 0 {
		t.Fatal("no finding on 1.31 for the fixture's untested CNI releases")
	}
	for _, f := range fs {
		if f.Severity == finding.High {
			t.Errorf("high finding from a tested-on or kubeadm list: %q", f.Title)
		}
		if checktest.HasObject([]finding.Finding{f}, "DaemonSet", "aks-calico", "calico-node") ||
			checktest.HasObject([]finding.Finding{f}, "Deployment", "eks-dns", "coredns") {
			t.Errorf("a managed provider's build was judged: %q", f.Title)
		}
	}
}
