package ingress

import (
	"slices"
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

// TestIngressControllerResilienceEvidenceItems: the OOM-killed pod's
// status, the missing memory request and the replica count are quoted as
// the fixture writes them, and resolve against it.
func TestIngressControllerResilienceEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, ingressControllerResilienceCheck(), checktest.Complete(checktest.Load(t, resilienceDir+"gap.yaml")))
	want := map[string][]string{
		"skipper-ingress": {"Pod/kube-system/skipper-ingress-7d9f-a1: status.containerStatuses[name=skipper-ingress].lastState.terminated.reason=OOMKilled, " +
			"status.containerStatuses[name=skipper-ingress].restartCount=4"},
		"ingress-nginx-controller": {
			"Deployment/ingress-nginx/ingress-nginx-controller: spec.template.spec.containers[name=controller].resources.requests.memory absent, " +
				"spec.template.spec.containers[name=controller].resources.limits.memory absent",
			"Deployment/ingress-nginx/ingress-nginx-controller: spec.replicas=1",
		},
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if w := want[f.Objects[0].Name]; !slices.Equal(got, w) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
	}
	if n := checktest.EvidenceTrue(t, fs, resilienceDir+"gap.yaml"); n != 3 {
		t.Errorf("%d items resolved, want 3", n)
	}
}

// TestIngressControllerResilienceUnsetReplicas: a Deployment and an
// autoscaler that do not write replicas are quoted as such; the evidence
// used to say spec.replicas=1, a value the object does not hold.
func TestIngressControllerResilienceUnsetReplicas(t *testing.T) {
	fs, _, _ := checktest.Run(t, ingressControllerResilienceCheck(), checktest.Complete(checktest.Load(t, resilienceDir+"unset-replicas.yaml")))
	if len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Fatalf("findings %+v, want the one-replica finding", fs)
	}
	ev := strings.Join(fs[0].Evidence, "\n")
	for _, w := range []string{
		"HorizontalPodAutoscaler/ingress-nginx/ingress-nginx-controller: spec.minReplicas absent",
		"Deployment/ingress-nginx/ingress-nginx-controller: spec.replicas absent",
		"the input holds 2 Ingresses",
	} {
		if !strings.Contains(ev, w) {
			t.Errorf("evidence does not say %q:\n%s", w, ev)
		}
	}
	if strings.Contains(ev, "replicas=1") || strings.Contains(ev, "minReplicas 1") {
		t.Errorf("evidence quotes a replica count the objects do not write:\n%s", ev)
	}
	if n := checktest.EvidenceTrue(t, fs, resilienceDir+"unset-replicas.yaml"); n != 2 {
		t.Errorf("%d items resolved, want 2", n)
	}
}
