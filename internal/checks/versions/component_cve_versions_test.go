package versions

import (
	"slices"
	"strings"
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

// TestComponentCVEVersionsEvidenceItems: each finding quotes the fields
// its version and webhook judgement come from, as the fixtures write
// them: the controller's image with its --validating-webhook argument, the
// webhook configuration calling an admission Service, the node runtimes,
// the kube-apiserver static pods grouped by image (when the server's own
// version is not in the input), and the argument list that has no
// --validating-webhook.
func TestComponentCVEVersionsEvidenceItems(t *testing.T) {
	want := map[string][]string{
		"component-cve-versions/gap.yaml": {
			"Deployment/ingress-nginx/ingress-nginx-controller: spec.template.spec.containers[name=controller].image=" +
				"registry.k8s.io/ingress-nginx/controller:v1.11.4@sha256:1111111111111111111111111111111111111111111111111111111111111111, " +
				"spec.template.spec.containers[name=controller].args[1]=--validating-webhook=:8443",
			"Pod/internal-ingress/internal-ingress-controller-7d9f-abcde: spec.containers[name=controller].image=registry.k8s.io/ingress-nginx/controller:v1.12.0",
			"ValidatingWebhookConfiguration/internal-ingress-admission: webhooks[name=validate.nginx.ingress.kubernetes.io].clientConfig.service.namespace=internal-ingress, " +
				"webhooks[name=validate.nginx.ingress.kubernetes.io].clientConfig.service.name=internal-ingress-controller-admission",
			"Node/node-containerd: status.nodeInfo.containerRuntimeVersion=containerd://1.7.12",
			"Node/aks-system-0: status.nodeInfo.containerRuntimeVersion=containerd://1.7.7-1",
			"Node/node-docker: status.nodeInfo.containerRuntimeVersion=docker://24.0.7",
		},
		"component-cve-versions/static-pods.yaml": {
			"2 Pods (kube-system/kube-apiserver-cp-0, kube-system/kube-apiserver-cp-1): spec.containers[name=kube-apiserver].image=k8s.gcr.io/kube-apiserver:v1.12.2",
			"Pod/kube-system/kube-apiserver-cp-2: spec.containers[name=kube-apiserver].image=k8s.gcr.io/kube-apiserver:v1.12.3",
		},
		"component-cve-versions/webhook-off.yaml": {
			"Deployment/ingress-nginx/ingress-nginx-controller: spec.template.spec.containers[name=controller].image=registry.k8s.io/ingress-nginx/controller:v1.10.1, " +
				`spec.template.spec.containers[name=controller].args=["/nginx-ingress-controller","--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller","--election-id=ingress-nginx-leader"]`,
		},
	}
	for file, w := range want {
		fs, _, _ := checktest.Run(t, componentCVEVersionsCheck(), checktest.Complete(checktest.Load(t, file)))
		var got []string
		for _, f := range fs {
			if len(f.EvidenceItems) == 0 {
				t.Errorf("%s: %q has no evidence item", file, f.Title)
			}
			for _, it := range f.EvidenceItems {
				got = append(got, it.String())
			}
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: items\n  %s\nwant\n  %s", file, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
		if n := checktest.EvidenceTrue(t, fs, file); n != len(w) {
			t.Errorf("%s: %d items resolved, want %d", file, n, len(w))
		}
	}
}

// TestComponentCVEVersionsRuncTitleAgrees: one node "runs", not "run".
func TestComponentCVEVersionsRuncTitleAgrees(t *testing.T) {
	fs, _, _ := checktest.Run(t, componentCVEVersionsCheck(), checktest.Complete(checktest.Load(t, "component-cve-versions/gap.yaml")))
	n := 0
	for _, f := range fs {
		if strings.Contains(f.Title, "runc") {
			n++
			if !strings.HasPrefix(f.Title, "1 node runs ") {
				t.Errorf("title %q", f.Title)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d runc findings, want 3", n)
	}
}
