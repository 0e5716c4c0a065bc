package ingress

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const terminationDir = "ingress-backend-termination/"

func TestIngressBackendTerminationGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, ingressBackendTerminationCheck(), checktest.Complete(checktest.Load(t, terminationDir+"gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	want := map[[3]string]finding.Severity{
		{"Deployment", "shop", "api"}:         finding.Medium,
		{"StatefulSet", "shop", "web"}:        finding.Medium,
		{"Deployment", "edge", "tcp-gateway"}: finding.Low,
	}
	if len(fs) != len(want) {
		t.Errorf("%d findings, want %d: %+v", len(fs), len(want), fs)
	}
	for _, f := range fs {
		o := f.Objects[0]
		sev, ok := want[[3]string{o.Kind, o.Namespace, o.Name}]
		if !ok || f.Severity != sev {
			t.Errorf("%q: %v, want %v (listed %v)", f.Title, f.Severity, sev, ok)
		}
		if f.Cases[0] != caseRavelin {
			t.Errorf("cites %v", f.Cases)
		}
	}
	if !checktest.HasObject(fs, "Ingress", "shop", "api") || !checktest.HasObject(fs, "Service", "shop", "api") {
		t.Error("the GKE Ingress and its Service are not named")
	}
	if checktest.HasObject(fs, "Deployment", "shop", "admin") {
		t.Error("judged a workload behind an in-cluster ingress class")
	}
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if f.Objects[0].Name == "web" && !strings.Contains(ev, "terminationGracePeriodSeconds=10") {
			t.Errorf("grace period not in evidence: %s", ev)
		}
	}
}

func TestIngressBackendTerminationHealthy(t *testing.T) {
	checktest.Quiet(t, ingressBackendTerminationCheck(), checktest.Complete(checktest.Load(t, terminationDir+"healthy.yaml")))
}

// Open world: an Ingress whose Service is not in the plain files leaves
// the rule partial, not passed.
func TestIngressBackendTerminationServiceNotInInput(t *testing.T) {
	s := checktest.Load(t, terminationDir+"gap.yaml")
	kept := s.Services[:0]
	for _, svc := range s.Services {
		if svc.Name != "api" {
			kept = append(kept, svc)
		}
	}
	s.Services = kept
	fs, ctx, _ := checktest.Run(t, ingressBackendTerminationCheck(), s)
	if checktest.HasObject(fs, "Deployment", "shop", "api") {
		t.Error("judged a workload through a Service that is not in the input")
	}
	if _, ok := ctx.Notes()[ruleNoPreStop]; !ok {
		t.Errorf("no incomplete note: %v", ctx.Notes())
	}
}

// On GKE, an Ingress with no class is served by GKE's load balancer.
func TestIngressBackendTerminationClasslessOnGKE(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, terminationDir+"gap.yaml"))
	for i := range s.Ingresses {
		if s.Ingresses[i].Name == "admin" {
			s.Ingresses[i].Spec.IngressClassName = nil
		}
	}
	fs, _, _ := checktest.Run(t, ingressBackendTerminationCheck(), s)
	if checktest.HasObject(fs, "Deployment", "shop", "admin") {
		t.Fatal("a class-less Ingress off GKE was judged")
	}
	s.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "gke-pool-1-abc", Labels: map[string]string{"cloud.google.com/gke-nodepool": "pool-1"}},
		Spec: corev1.NodeSpec{ProviderID: "gce://project/europe-west1-b/gke-pool-1-abc"}}}
	fs, _, _ = checktest.Run(t, ingressBackendTerminationCheck(), s)
	if !checktest.HasObject(fs, "Deployment", "shop", "admin") {
		t.Errorf("the class-less Ingress's workload on GKE is not a finding: %+v", fs)
	}
}
