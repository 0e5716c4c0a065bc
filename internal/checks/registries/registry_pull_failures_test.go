package registries

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// The cr.l5d.io outage as the Linkerd install saw it: one medium finding for
// cr.l5d.io naming the three pods and quoting their waiting reasons, the
// image and the kubelet's Failed event.
func TestRegistryPullFailuresLinkerdOutage(t *testing.T) {
	file := "registry-pull-failures/linkerd-install.yaml"
	fs, _, ok := checktest.Run(t, registryPullFailuresCheck(), checktest.Load(t, file))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %v: want one", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || !strings.Contains(f.Title, "3 workloads") || !strings.Contains(f.Title, "cr.l5d.io") {
		t.Errorf("finding %s %q", f.Severity, f.Title)
	}
	for _, pod := range []string{"linkerd-identity-79dd6d5c88-btn9w", "linkerd-destination-5b6c9d8f7-q2x4z", "linkerd-proxy-injector-6d8f9b7c5-m9n2p"} {
		if !checktest.HasObject(fs, "Pod", "linkerd", pod) {
			t.Errorf("finding does not name pod %s", pod)
		}
	}
	if !slices.Contains(f.Cases, caseProjectRegistries) {
		t.Errorf("cases %v", f.Cases)
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "503 Service Unavailable") {
		t.Errorf("the Failed event is not quoted: %v", f.Evidence)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n < 4 {
		t.Errorf("%d evidence items checked against the file, want the three pods' and the event's", n)
	}
}

// Docker Hub out of reach: two workloads' docker.io images, one with a
// registry host and one without, are one registry.
func TestRegistryPullFailuresDockerHub(t *testing.T) {
	file := "registry-pull-failures/docker-hub-timeout.yaml"
	fs, _, _ := checktest.Run(t, registryPullFailuresCheck(), checktest.Load(t, file))
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "docker.io") || !slices.Contains(fs[0].Cases, caseChinaMirrors) {
		t.Fatalf("findings %v: want one for docker.io citing %s", fs, caseChinaMirrors)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// One workload that cannot pull (its own tag) while another runs from the
// same registry says nothing of the registry: quiet, every rule judged.
func TestRegistryPullFailuresOneWorkloadQuiet(t *testing.T) {
	checktest.Quiet(t, registryPullFailuresCheck(), checktest.Complete(checktest.Load(t, "registry-pull-failures/one-workload.yaml")))
}

// Pods read partly: what they show still stands, but silence is partial.
func TestRegistryPullFailuresPartialPods(t *testing.T) {
	_, ctx, ok := checktest.Run(t, registryPullFailuresCheck(), checktest.Load(t, "registry-pull-failures/one-workload.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	if n, noted := ctx.Notes()[pullFailuresRule]; !noted || n.Skipped {
		t.Errorf("rule %s on pods not read whole: note %+v (noted %v), want incomplete", pullFailuresRule, n, noted)
	}
}
