package ingress

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestIngressClassBindingGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, ingressClassBindingCheck(), checktest.Complete(checktest.Load(t, "gap.yaml")))
	if !ok {
		t.Fatal("not evaluated")
	}
	for _, o := range [][3]string{{"Ingress", "shop", "shop"}, {"Ingress", "shop", "admin"},
		{"IngressClass", "", "nginx-internal"}, {"Ingress", "ops", "internal"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("no finding names %v: %+v", o, fs)
		}
	}
	if checktest.HasObject(fs, "Ingress", "ops", "legacy") {
		t.Error("judged an Ingress bound by annotation to a controller the check cannot see")
	}
	for _, f := range fs {
		if f.Severity != finding.High {
			t.Errorf("%q is %v, want high", f.Title, f.Severity)
		}
	}
	if len(fs) != 3 {
		t.Errorf("%d findings, want 3", len(fs))
	}
}

// Open world: from files, a missing class or controller may exist unseen.
func TestIngressClassBindingOpenWorld(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, ingressClassBindingCheck(), checktest.Load(t, "gap.yaml"))
	if checktest.HasObject(fs, "Ingress", "shop", "admin") || checktest.HasObject(fs, "IngressClass", "", "nginx-internal") {
		t.Errorf("concluded absence from incomplete input: %+v", fs)
	}
	if !checktest.HasObject(fs, "Ingress", "shop", "shop") {
		t.Error("the class-less Ingress ignored by the visible ingress-nginx 1.9 is a finding on any input")
	}
	if _, ok := ctx.Notes()[ruleClassMissing]; !ok {
		t.Error("no incomplete note for the unresolved class")
	}
}

func TestIngressClassBindingHealthyPasses(t *testing.T) {
	checktest.Quiet(t, ingressClassBindingCheck(), checktest.Complete(checktest.Load(t, "healthy.yaml")))
}

func TestClasslessWithoutController(t *testing.T) {
	s := checktest.Load(t, "gap.yaml")
	s.Deployments = nil
	s.IngressClasses = nil
	fs, _, _ := checktest.Run(t, ingressClassBindingCheck(), checktest.Complete(s))
	if !checktest.HasObject(fs, "Ingress", "shop", "shop") {
		t.Fatalf("findings %+v", fs)
	}
	for _, f := range fs {
		if checktest.HasObject([]finding.Finding{f}, "Ingress", "shop", "shop") && f.Severity != finding.Medium {
			t.Errorf("no controller in view: %v, want medium", f.Severity)
		}
	}
}
