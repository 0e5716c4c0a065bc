package dns

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Before the API server restart: CoreDNS 1.3.1 with nothing at /tmp is
// high and cites the case.
func TestCorednsKnownBadReleaseGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/gap.yaml"))
	fs, _, ok := checktest.Run(t, clusterDNSKnownBadReleaseCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Severity != finding.High || fs[0].Cases[0] != caseKnownBad {
		t.Fatalf("findings %v, want one high citing %s", fs, caseKnownBad)
	}
	if !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") {
		t.Errorf("finding does not name the CoreDNS Deployment: %v", fs[0].Objects)
	}
	checktest.EvidenceTrue(t, fs, "cluster-dns-known-bad-release/gap.yaml")
}

// With the /tmp workaround the same release is not flagged, every rule judged.
func TestCorednsKnownBadReleaseClean(t *testing.T) {
	checktest.Quiet(t, clusterDNSKnownBadReleaseCheck(), checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/clean.yaml")))
}

// The workaround does not help against the other rows, and tags are
// compared with and without kubeadm's "v"; vendor builds and other
// releases are left alone.
func TestCorednsKnownBadReleaseRows(t *testing.T) {
	medium := finding.Medium
	for image, want := range map[string]*finding.Severity{
		"registry.k8s.io/coredns/coredns:v1.11.0":                                     &medium,
		"coredns/coredns:1.8.5":                                                       &medium,
		"registry.k8s.io/coredns/coredns:v1.11.1":                                     nil,
		"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:v1.11.0-eksbuild.1": nil,
	} {
		s := checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/clean.yaml"))
		s.Deployments[0].Spec.Template.Spec.Containers[0].Image = image
		fs, _, _ := checktest.Run(t, clusterDNSKnownBadReleaseCheck(), s)
		switch {
		case want == nil && len(fs) != 0:
			t.Errorf("%s: flagged %v", image, fs)
		case want != nil && (len(fs) != 1 || fs[0].Severity != *want):
			t.Errorf("%s: findings %v, want one %s", image, fs, *want)
		}
	}
}

// No cluster DNS Deployment in a partial read: not evaluated, never pass.
func TestCorednsKnownBadReleaseMissingIsNotEvaluated(t *testing.T) {
	s := checktest.Load(t, "cluster-dns-known-bad-release/gap.yaml")
	s.Deployments = nil
	if _, _, ok := checktest.Run(t, clusterDNSKnownBadReleaseCheck(), s); ok {
		t.Error("evaluated without a CoreDNS Deployment in a partial input")
	}
}

// Before the GKE timeouts: the dnsmasq container of a kube-dns 1.22.13
// build is medium and cites the dnsmasq case, and only that container.
func TestClusterDNSKnownBadReleaseKubeDNSGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/kube-dns-gap.yaml"))
	fs, _, ok := checktest.Run(t, clusterDNSKnownBadReleaseCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Severity != finding.Medium || fs[0].Cases[0] != caseDnsmasq {
		t.Fatalf("findings %v, want one medium citing %s", fs, caseDnsmasq)
	}
	if !checktest.HasObject(fs, "Deployment", "kube-system", "kube-dns") || !strings.Contains(fs[0].Title, "dnsmasq") {
		t.Errorf("finding does not name the kube-dns Deployment's dnsmasq container: %v %q", fs[0].Objects, fs[0].Title)
	}
	checktest.EvidenceTrue(t, fs, "cluster-dns-known-bad-release/kube-dns-gap.yaml")
}

// On a build with dnsmasq 2.88, nothing to report.
func TestClusterDNSKnownBadReleaseKubeDNSClean(t *testing.T) {
	checktest.Quiet(t, clusterDNSKnownBadReleaseCheck(), checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/kube-dns-clean.yaml")))
}

// Upstream tags match, other vendors' suffixes do not.
func TestClusterDNSKnownBadReleaseKubeDNSTags(t *testing.T) {
	for image, flagged := range map[string]bool{
		"registry.k8s.io/dns/k8s-dns-dnsmasq-nanny:1.17.0":  true,
		"registry.k8s.io/dns/k8s-dns-dnsmasq-nanny:1.22.15": true,
		"registry.k8s.io/dns/k8s-dns-dnsmasq-nanny:1.17.1":  false,
		"example.com/k8s-dns-dnsmasq-nanny:1.22.14-custom":  false,
		"gke.gcr.io/k8s-dns-kube-dns:1.22.14-gke.0":         false,
	} {
		s := checktest.Complete(checktest.Load(t, "cluster-dns-known-bad-release/kube-dns-clean.yaml"))
		s.Deployments[0].Spec.Template.Spec.Containers[1].Image = image
		fs, _, _ := checktest.Run(t, clusterDNSKnownBadReleaseCheck(), s)
		if (len(fs) == 1) != flagged || len(fs) > 1 {
			t.Errorf("%s: findings %v, want flagged %v", image, fs, flagged)
		}
	}
}
