package checks

import (
	"errors"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// runAll runs every registered check on a snapshot the way an audit does:
// a check whose required input was not read is not evaluated, any other
// error fails the test. It returns the findings and the IDs of the checks
// that were not evaluated.
func runAll(t *testing.T, s *snapshot.Snapshot) (fs []finding.Finding, notEvaluated []string) {
	t.Helper()
	for _, c := range All() {
		missing := false
		for _, in := range c.Reads {
			if !in.Optional && s.Status(in.Resource).Status != snapshot.StatusRead {
				missing = true
			}
		}
		if missing {
			notEvaluated = append(notEvaluated, c.ID)
			continue
		}
		got, err := c.Run(&check.Context{Snapshot: s})
		if errors.Is(err, check.ErrNotEvaluated) {
			notEvaluated = append(notEvaluated, c.ID)
			continue
		}
		if err != nil {
			t.Fatalf("check %s: %v", c.ID, err)
		}
		for i := range got {
			if got[i].Check != c.ID {
				t.Errorf("check %s returned a finding of %q", c.ID, got[i].Check)
			}
			if len(got[i].Cases) == 0 || len(got[i].Objects) == 0 || got[i].Severity > c.Severity {
				t.Errorf("check %s: malformed finding %+v", c.ID, got[i])
			}
		}
		fs = append(fs, got...)
	}
	return fs, notEvaluated
}

// findingsNaming returns the findings of a check that name an object.
func findingsNaming(fs []finding.Finding, check, kind, namespace, name string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if f.Check == check && checktest.HasObject([]finding.Finding{f}, kind, namespace, name) {
			out = append(out, f)
		}
	}
	return out
}

// TestFoundingAzureCluster is the acceptance test for the founding report
// (Azure/azure-container-networking#4793): an AKS cluster in the middle of a
// 1.34 to 1.35 upgrade, where azure-cns rolled the /v2/ azure-cni installer
// onto Ubuntu 20.04 nodes. An audit of that cluster must name the DaemonSet,
// the 20.04 nodes, the budget that blocks the drain and the stuck pod.
func TestFoundingAzureCluster(t *testing.T) {
	const dir = "azure-founding/"
	s := checktest.Load(t, dir+"cluster.yaml", dir+"azure-cns-v2.yaml", dir+"incident.yaml")
	fs, notEvaluated := runAll(t, s)
	for _, f := range fs {
		t.Logf("%-8v %-22s %s", f.Severity, f.Check, f.Title)
	}
	if len(notEvaluated) > 0 {
		t.Logf("not evaluated: %v", notEvaluated)
	}
	old := []string{"aks-np2004-0", "aks-np2004-1", "aks-np2004-2"}

	t.Run("host-binary-glibc names azure-cns and the Ubuntu 20.04 nodes", func(t *testing.T) {
		got := findingsNaming(fs, "host-binary-glibc", "DaemonSet", "kube-system", "azure-cns")
		if len(got) != 1 {
			t.Fatalf("%d host-binary-glibc findings name kube-system/azure-cns, want 1", len(got))
		}
		f := got[0]
		if f.Severity != finding.High || !slices.Contains(f.Cases, "azure-cni-v2-glibc") {
			t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
		}
		if n := checktest.NodeNames(f); !slices.Equal(n, old) {
			t.Errorf("nodes %v, want exactly the Ubuntu 20.04 nodes %v", n, old)
		}
		for _, e := range []string{
			"DaemonSet/kube-system/azure-cns: spec.template.spec.initContainers[0].image=mcr.microsoft.com/containernetworking/v2/azure-cni:v1.8.11",
			"hostPath.path=/opt/cni/bin",
			"aks-np2004-1", `status.nodeInfo.osImage=Ubuntu 20.04.6 LTS`, `osImage "Ubuntu 20.04.6 LTS" → glibc 2.31`,
		} {
			if !checktest.AnyEvidence(f, e) {
				t.Errorf("no evidence %q", e)
			}
		}
	})

	t.Run("version-skew names the pool left on 1.34", func(t *testing.T) {
		var got []finding.Finding
		for _, f := range fs {
			if f.Check == "version-skew" {
				got = append(got, f)
			}
		}
		if len(got) != 1 || got[0].Severity != finding.Medium || !slices.Equal(checktest.NodeNames(got[0]), old) {
			t.Fatalf("version-skew findings: %+v", got)
		}
		if !strings.Contains(got[0].Title, "np2004") {
			t.Errorf("title %q does not name the pool", got[0].Title)
		}
	})

	t.Run("node-os-lifecycle names the Ubuntu 20.04 nodes", func(t *testing.T) {
		for _, n := range old {
			if len(findingsNaming(fs, "node-os-lifecycle", "Node", "", n)) == 0 {
				t.Errorf("node %s not named", n)
			}
		}
	})

	t.Run("pdb-blocks-drain names the budget", func(t *testing.T) {
		if _, ok := Lookup("pdb-blocks-drain"); !ok {
			t.Skip("pdb-blocks-drain is not registered yet")
		}
		if len(findingsNaming(fs, "pdb-blocks-drain", "PodDisruptionBudget", "shop", "web")) == 0 {
			t.Error("no pdb-blocks-drain finding names PodDisruptionBudget shop/web")
		}
	})

	t.Run("pod-sandbox-failures names the stuck pod", func(t *testing.T) {
		if _, ok := Lookup("pod-sandbox-failures"); !ok {
			t.Skip("pod-sandbox-failures is not registered yet")
		}
		got := findingsNaming(fs, "pod-sandbox-failures", "Pod", "shop", "web-6c9f7b-q7m4z")
		if len(got) == 0 {
			t.Fatal("no pod-sandbox-failures finding names Pod shop/web-6c9f7b-q7m4z")
		}
		if !slices.Contains(got[0].Cases, "azure-cni-v2-glibc") {
			t.Errorf("sandbox finding cites %v", got[0].Cases)
		}
	})

	t.Run("every object of the incident is named somewhere", func(t *testing.T) {
		for _, o := range []struct{ kind, ns, name string }{
			{"DaemonSet", "kube-system", "azure-cns"},
			{"Node", "", "aks-np2004-0"}, {"Node", "", "aks-np2004-1"}, {"Node", "", "aks-np2004-2"},
			{"PodDisruptionBudget", "shop", "web"},
			{"Pod", "shop", "web-6c9f7b-q7m4z"},
		} {
			if !checktest.HasObject(fs, o.kind, o.ns, o.name) {
				t.Errorf("no finding names %s %s/%s", o.kind, o.ns, o.name)
			}
		}
		// The upgraded pool is not at fault.
		for _, f := range fs {
			if f.Severity >= finding.High && checktest.HasObject([]finding.Finding{f}, "Node", "", "aks-np2204-0") {
				t.Errorf("high finding %q names an upgraded Ubuntu 22.04 node", f.Title)
			}
		}
	})
}

// TestFoundingAzureClusterStaticInstaller: the same cluster with the
// statically linked installer from the original repository, before anything
// broke. Nothing may cite the founding case at high severity.
func TestFoundingAzureClusterStaticInstaller(t *testing.T) {
	const dir = "azure-founding/"
	s := checktest.Load(t, dir+"cluster.yaml", dir+"azure-cns-static.yaml", dir+"healthy.yaml")
	fs, _ := runAll(t, s)
	for _, f := range fs {
		t.Logf("%-8v %-22s %s", f.Severity, f.Check, f.Title)
		if f.Severity >= finding.High && slices.Contains(f.Cases, "azure-cni-v2-glibc") {
			t.Errorf("high finding cites azure-cni-v2-glibc: %s (%s)", f.Title, f.Check)
		}
		if f.Check == "host-binary-glibc" {
			t.Errorf("host-binary-glibc fires on the static installer: %s", f.Title)
		}
	}
	// The pool lag is still there and still worth a look, at medium.
	if len(findingsNaming(fs, "version-skew", "Node", "", "aks-np2004-0")) == 0 {
		t.Error("version-skew is silent on the lagging pool")
	}
}
