package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The fixture is kube-apiserver v1.37.2's /metrics on the test bed (run
// with --runtime-config=api/beta=true) after a client listed every served
// resource, trimmed to a few families: it counts requests to core v1
// endpoints and componentstatuses (deprecated, no removal release),
// resource.k8s.io/v1beta1 (removed in 1.38), v1beta2 (1.39) and others.
const usageFixture = "deprecated-usage/metrics.txt"

func findingFor(fs []finding.Finding, gv string) *finding.Finding {
	for i := range fs {
		if strings.Contains(fs[i].Title, " "+gv+" ") {
			return &fs[i]
		}
	}
	return nil
}

func TestDeprecatedUsageWithoutTarget(t *testing.T) {
	c := deprecatedAPIUsageCheck()
	fs, _, evaluated := checktest.Run(t, c, checktest.Load(t, usageFixture))
	if !evaluated || len(fs) == 0 {
		t.Fatalf("evaluated %v, %d findings", evaluated, len(fs))
	}
	for _, f := range fs {
		if f.Severity != finding.Low || f.Preflight != "" {
			t.Errorf("%s: %v %q, want low without a target", f.Title, f.Severity, f.Preflight)
		}
	}
	dra := findingFor(fs, "resource.k8s.io/v1beta1")
	if dra == nil || !strings.Contains(dra.Title, "removed in Kubernetes 1.38") || !strings.Contains(dra.Title, "deviceclasses") {
		t.Fatalf("resource.k8s.io/v1beta1: %+v", dra)
	}
	ep := findingFor(fs, "v1")
	if ep == nil || !strings.Contains(ep.Title, "endpoints") || !strings.Contains(ep.Title, "no removal release") {
		t.Fatalf("core v1: %+v", ep)
	}
	if n := checktest.EvidenceTrue(t, fs, usageFixture); n == 0 {
		t.Fatal("no evidence item")
	}
}

func TestDeprecatedUsageAtTarget(t *testing.T) {
	c := deprecatedAPIUsageCheck()
	fs, _ := runWith(t, c, checktest.Load(t, usageFixture), target("1.38"))
	high := 0
	for _, f := range fs {
		if f.Severity == finding.High {
			high++
		}
	}
	dra := findingFor(fs, "resource.k8s.io/v1beta1")
	if dra == nil || dra.Severity != finding.High || dra.Preflight != finding.PreflightBefore ||
		!strings.Contains(dra.Title, "this upgrade breaks them") || !strings.Contains(dra.Message, "UpgradeBlockedOnDeprecatedAPIUsage") {
		t.Fatalf("resource.k8s.io/v1beta1 at 1.38: %+v", dra)
	}
	// Removed in 1.39: still served at 1.38.
	if v2 := findingFor(fs, "resource.k8s.io/v1beta2"); v2 == nil || v2.Severity != finding.Low {
		t.Fatalf("resource.k8s.io/v1beta2 at 1.38: %+v", v2)
	}
	if high != 1 {
		t.Errorf("%d high findings, want 1 (resource.k8s.io/v1beta1 only)", high)
	}
	checktest.EvidenceTrue(t, fs, usageFixture)
}

// A fresh cluster whose /metrics counts no deprecated request: quiet, and
// every rule judged.
func TestDeprecatedUsageQuiet(t *testing.T) {
	s, err := snapshot.LoadPaths([]string{"../testdata/managed/kind"})
	if err != nil {
		t.Fatal(err)
	}
	checktest.Quiet(t, deprecatedAPIUsageCheck(), s)
}

// /metrics forbidden on AKS: no finding, and the rule's note points at
// AKS's own view of the usage.
func TestDeprecatedUsageForbiddenOnAKS(t *testing.T) {
	s, err := snapshot.LoadPaths([]string{"../testdata/managed/aks"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetCoverage(snapshot.APIServerMetrics, snapshot.StatusForbidden, "forbidden")
	fs, ctx := runWith(t, deprecatedAPIUsageCheck(), s, nil)
	if len(fs) != 0 {
		t.Fatalf("findings: %v", fs)
	}
	note := ctx.Notes()[ruleRequested]
	if !strings.Contains(note.Reason, "UpgradeBlockedOnDeprecatedAPIUsage") {
		t.Fatalf("note %+v", note)
	}
}

// Read from one of several API servers of a self-managed control plane:
// the silence is partial.
func TestDeprecatedUsageOneOfSeveralAPIServers(t *testing.T) {
	s, err := snapshot.LoadPaths([]string{"../testdata/managed/kind"})
	if err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, p := range s.Pods {
		for _, c := range p.Spec.Containers {
			if strings.Contains(c.Image, "kube-apiserver") {
				pods++
			}
		}
	}
	if pods != 1 {
		t.Skipf("kind fixture has %d kube-apiserver pods", pods)
	}
	s.Pods = append(s.Pods, s.Pods[podIndex(s, "kube-apiserver")])
	s.Pods[len(s.Pods)-1].Name = "kube-apiserver-second"
	_, ctx := runWith(t, deprecatedAPIUsageCheck(), s, nil)
	if note := ctx.Notes()[ruleRequested]; !strings.Contains(note.Reason, "2 kube-apiserver pods") {
		t.Fatalf("note %+v", note)
	}
}

func podIndex(s *snapshot.Snapshot, image string) int {
	for i, p := range s.Pods {
		for _, c := range p.Spec.Containers {
			if strings.Contains(c.Image, image) {
				return i
			}
		}
	}
	return -1
}
