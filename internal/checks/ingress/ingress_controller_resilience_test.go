package ingress

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const resilienceDir = "ingress-controller-resilience/"

func TestIngressControllerResilienceGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, ingressControllerResilienceCheck(), checktest.Complete(checktest.Load(t, resilienceDir+"gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	if len(fs) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(fs), fs)
	}
	want := map[string]struct {
		sev  finding.Severity
		text []string
	}{
		"skipper-ingress":          {finding.High, []string{"OOM-killed", "skipper-ingress-7d9f-a1"}},
		"ingress-nginx-controller": {finding.Medium, []string{"requests no memory", "one replica while the cluster has 3 Ingresses"}},
	}
	for _, f := range fs {
		w, ok := want[f.Objects[0].Name]
		if !ok || f.Severity != w.sev || f.Cases[0] != caseZalando {
			t.Errorf("%q: %v, cases %v", f.Title, f.Severity, f.Cases)
			continue
		}
		for _, s := range w.text {
			if !strings.Contains(f.Message, s) {
				t.Errorf("%q does not say %q: %s", f.Title, s, f.Message)
			}
		}
	}
	if !checktest.HasObject(fs, "Pod", "kube-system", "skipper-ingress-7d9f-a1") || checktest.HasObject(fs, "Pod", "kube-system", "skipper-ingress-7d9f-b2") {
		t.Error("the OOM-killed pod, and only it, should be named")
	}
	if checktest.HasObject(fs, "DaemonSet", "traefik", "traefik") {
		t.Error("judged the Traefik DaemonSet that requests memory")
	}
}

func TestIngressControllerResilienceHealthy(t *testing.T) {
	checktest.Quiet(t, ingressControllerResilienceCheck(), checktest.Complete(checktest.Load(t, resilienceDir+"healthy.yaml")))
}

func TestControllerOf(t *testing.T) {
	f, err := loadResilienceFacts()
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]string{
		"registry.k8s.io/ingress-nginx/controller:v1.11.3@sha256:abc": "ingress-nginx",
		"registry.opensource.zalan.do/teapot/skipper-arm64:v0.17.1":   "skipper",
		"traefik:v3.1":                       "traefik",
		"docker.io/library/traefik:v2.11":    "traefik",
		"example.com/traefik-forward-auth:2": "",
		"nginx:1.27":                         "",
	} {
		if got, _ := f.controllerOf(image); got != want {
			t.Errorf("%s: %q, want %q", image, got, want)
		}
	}
}

// Plain files are an open world: silence on them is partial, never a pass,
// because every rule needs a resource that files never hold completely.
func TestIngressControllerResilienceFilesArePartial(t *testing.T) {
	c := ingressControllerResilienceCheck()
	fs, ctx, ok := checktest.Run(t, c, checktest.Load(t, resilienceDir+"healthy.yaml"))
	if !ok || len(fs) != 0 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	for _, r := range c.Rules {
		complete := true
		for _, need := range r.Needs {
			complete = complete && ctx.Complete(need)
		}
		if complete {
			t.Errorf("rule %s has complete input from plain files: it would pass", r.ID)
		}
	}
}
