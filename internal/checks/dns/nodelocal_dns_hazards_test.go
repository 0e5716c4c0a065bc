package dns

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// nodelocalItemLines is each evidence item of f as its line.
func nodelocalItemLines(f finding.Finding) []string {
	var out []string
	for _, it := range f.EvidenceItems {
		out = append(out, it.String())
	}
	return out
}

// TestNodelocalEvidenceItems: the Calico and cache findings quote the
// calico/node and node-cache images, the policy's types and the cache
// pod's node, restart count and last termination, each as read in the
// fixture.
func TestNodelocalEvidenceItems(t *testing.T) {
	fs, _ := run(t, nodelocalDNSHazardsCheck(), checktest.Complete(checktest.Load(t, "gap.json")))
	want := []struct {
		title string
		sev   finding.Severity
		lines []string
	}{
		{"Calico and 1 NetworkPolicy", finding.Medium, []string{
			"DaemonSet/calico-system/calico-node: spec.template.spec.containers[name=calico-node].image=docker.io/calico/node:v3.27.3",
			"DaemonSet/kube-system/node-local-dns: spec.template.spec.containers[name=node-cache].image=registry.k8s.io/dns/k8s-dns-node-cache:1.23.1",
			`NetworkPolicy/shop/db-ingress: spec.policyTypes=["Ingress","Egress"]`,
		}},
		{"OOM-killed (1)", finding.High, []string{
			"Pod/kube-system/node-local-dns-1: spec.nodeName=node-01, status.containerStatuses[name=node-cache].restartCount=7, " +
				"status.containerStatuses[name=node-cache].lastState.terminated.reason=OOMKilled",
		}},
	}
	for _, w := range want {
		f := findTitle(t, fs, w.title, w.sev)
		if got := nodelocalItemLines(f); !slices.Equal(got, w.lines) {
			t.Errorf("%q: items\n  %q\nwant\n  %q", f.Title, got, w.lines)
		}
		for _, l := range w.lines {
			if !slices.Contains(f.Evidence, l) {
				t.Errorf("%q: item %q is not an evidence line", f.Title, l)
			}
		}
	}
	if n := checktest.EvidenceTrue(t, fs, "gap.json"); n != 4 {
		t.Errorf("%d items resolved, want 4", n)
	}
}
