package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func corednsSliceFixture(t *testing.T, server string) *snapshot.Snapshot {
	t.Helper()
	s := checktest.Complete(checktest.Load(t, "coredns-endpointslice-120.yaml"))
	s.Source.ServerVersion = server
	return s
}

func corednsSliceFindings(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if slices.Contains(f.Cases, caseCoreDNSSliceV1beta1) {
			out = append(out, f)
		}
	}
	return out
}

// coredns issue 6176: CoreDNS 1.9.3 started on 1.20, upgrade to 1.26.
func TestCoreDNSSliceAtStartFlagsTheReportedUpgrade(t *testing.T) {
	fs, _ := runWith(t, upgradePreflightCheck(), corednsSliceFixture(t, "v1.20.15"), target("1.26"))
	got := corednsSliceFindings(fs)
	if len(got) != 1 || got[0].Severity != finding.Medium || !strings.Contains(got[0].Title, "CoreDNS v1.9.3") ||
		!checktest.HasObject(got, "Deployment", "kube-system", "coredns") {
		t.Fatalf("findings citing %s: %+v, want one medium on kube-system/coredns", caseCoreDNSSliceV1beta1, got)
	}
}

// Not the gap: a target that still serves v1beta1, a control plane that
// already serves v1 (CoreDNS chose v1 at its start, or restarted since),
// and a CoreDNS from 1.11.0 on, which watches only v1.
func TestCoreDNSSliceAtStartQuiet(t *testing.T) {
	for _, tc := range []struct{ name, server, target string }{
		{"target 1.24 still serves v1beta1", "v1.20.15", "1.24"},
		{"control plane 1.21 serves v1", "v1.21.14", "1.26"},
	} {
		fs, _ := runWith(t, upgradePreflightCheck(), corednsSliceFixture(t, tc.server), target(tc.target))
		if got := corednsSliceFindings(fs); len(got) != 0 {
			t.Errorf("%s: %+v, want none", tc.name, got)
		}
	}
	s := corednsSliceFixture(t, "v1.20.15")
	d := &s.Deployments[0]
	d.Spec.Template.Spec.Containers = slices.Clone(d.Spec.Template.Spec.Containers)
	d.Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/coredns/coredns:v1.11.1"
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.26"))
	if got := corednsSliceFindings(fs); len(got) != 0 {
		t.Errorf("CoreDNS 1.11.1: %+v, want none", got)
	}
}
