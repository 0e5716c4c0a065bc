package versions

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

var snapshotVWC = snapshot.ValidatingWebhookConfigurations

func TestComponentCVEVersionsGap(t *testing.T) {
	s := checktest.Load(t, "component-cve-versions/gap.yaml")
	s.Source.ServerVersion = "v1.12.2"
	fs, _, ok := checktest.Run(t, componentCVEVersionsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	want := []struct {
		kind, ns, name string
		sev            finding.Severity
	}{
		{"Service", "default", "kubernetes", finding.Critical},
		{"Deployment", "ingress-nginx", "ingress-nginx-controller", finding.Critical},
		{"Pod", "internal-ingress", "internal-ingress-controller-7d9f-abcde", finding.Critical},
		{"Node", "", "node-containerd", finding.Medium},
		{"Node", "", "node-docker", finding.Medium},
		{"Node", "", "aks-system-0", finding.Low},
	}
	for _, w := range want {
		if got, found := sevOf(fs, w.kind, w.ns, w.name); !found || got != w.sev {
			t.Errorf("%s %s/%s: %v (found %v), want %v", w.kind, w.ns, w.name, got, found, w.sev)
		}
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(fs), len(want), fs)
	}
}

func TestComponentCVEVersionsVendorAPIServerIsHigh(t *testing.T) {
	s := checktest.Load(t, "component-cve-versions/clean.yaml")
	s.Source.ServerVersion = "v1.11.3-gke.18"
	fs, _, _ := checktest.Run(t, componentCVEVersionsCheck(), s)
	if got, found := sevOf(fs, "Service", "default", "kubernetes"); !found || got != finding.High {
		t.Errorf("vendor build below the fix: %v (found %v), want high", got, found)
	}
}

func TestComponentCVEVersionsWebhookOffIsMedium(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "component-cve-versions/clean.yaml"))
	s.Source.ServerVersion = "v1.33.1"
	s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/ingress-nginx/controller:v1.10.1"
	s.Deployments[0].Spec.Template.Spec.Containers[0].Args = nil
	fs, _, _ := checktest.Run(t, componentCVEVersionsCheck(), s)
	if got, found := sevOf(fs, "Deployment", "ingress-nginx", "ingress-nginx-controller"); !found || got != finding.Medium {
		t.Errorf("webhook off on complete input: %v (found %v), want medium", got, found)
	}
	// Open world: with webhook configurations not complete, it is unknown.
	s.SetCoverage(snapshotVWC, snapshot.StatusNotInInput, "")
	fs, _, _ = checktest.Run(t, componentCVEVersionsCheck(), s)
	if got, _ := sevOf(fs, "Deployment", "ingress-nginx", "ingress-nginx-controller"); got != finding.High {
		t.Errorf("webhook unknown: %v, want high", got)
	}
}

func TestComponentCVEVersionsClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "component-cve-versions/clean.yaml"))
	s.Source.ServerVersion = "v1.33.1"
	checktest.Quiet(t, componentCVEVersionsCheck(), s)
}

func TestComponentCVEVersionsNoServerVersionSkips(t *testing.T) {
	s := checktest.Load(t, "component-cve-versions/clean.yaml")
	_, ctx, _ := checktest.Run(t, componentCVEVersionsCheck(), s)
	if n := ctx.Notes()[ruleCVEServer]; !n.Skipped {
		t.Errorf("notes %v: no server version must skip the API server rule", ctx.Notes())
	}
}
