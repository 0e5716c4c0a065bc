package ingress

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func runPathValidation(t *testing.T, file string) []finding.Finding {
	t.Helper()
	fs, _, ok := checktest.Run(t, ingressNginxPathValidationCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	checktest.EvidenceTrue(t, fs, file)
	return fs
}

// ingress-nginx 1.11.4 before the 1.12.0 upgrade of issue 12637: medium,
// naming both Ingresses and the three refused paths, not the plain /api.
func TestIngressNginxPathValidationBeforeUpgrade(t *testing.T) {
	fs := runPathValidation(t, "ingress-nginx-path-validation/gap.yaml")
	if len(fs) != 1 {
		t.Fatalf("want 1 finding, got %+v", fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Rule != rulePathsRejected || len(f.Cases) != 1 || f.Cases[0] != casePathValidation {
		t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
	}
	for _, obj := range [][2]string{{"scheduler", "api"}, {"gluu", "auth"}} {
		if !checktest.HasObject(fs, "Ingress", obj[0], obj[1]) {
			t.Errorf("finding does not name Ingress %s/%s: %v", obj[0], obj[1], f.Objects)
		}
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"/api/v1/schedules:batchDelete", "/api/v1/authorization:evaluate", "/.well-known/openid-configuration",
		"data[strict-validate-path-type] absent"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if strings.Contains(ev, "paths[2].path") || !strings.Contains(f.Title, "1.12.0") {
		t.Errorf("title %q or evidence names the valid /api path:\n%s", f.Title, ev)
	}
}

// After the upgrade, and on 1.11 with the key "true": high.
func TestIngressNginxPathValidationOn(t *testing.T) {
	for _, file := range []string{"ingress-nginx-path-validation/upgraded.yaml", "ingress-nginx-path-validation/opted-in.yaml"} {
		fs := runPathValidation(t, file)
		if len(fs) != 1 || fs[0].Severity != finding.High {
			t.Errorf("%s: want one high finding, got %+v", file, fs)
		}
	}
}

// ImplementationSpecific paths, or the validation turned off: quiet.
func TestIngressNginxPathValidationClean(t *testing.T) {
	for _, file := range []string{"ingress-nginx-path-validation/clean.yaml", "ingress-nginx-path-validation/opted-out.yaml"} {
		checktest.Quiet(t, ingressNginxPathValidationCheck(), checktest.Complete(checktest.Load(t, file)))
	}
}

// A controller reading another ConfigMap: the setting is unknown, partial.
func TestIngressNginxPathValidationOtherConfigMap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "ingress-nginx-path-validation/upgraded.yaml"))
	s.Deployments[0].Spec.Template.Spec.Containers[0].Args[2] = "--configmap=$(POD_NAMESPACE)/custom"
	fs, ctx, _ := checktest.Run(t, ingressNginxPathValidationCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings with the setting unknown: %v", fs)
	}
	if n, ok := ctx.Notes()[rulePathsRejected]; !ok || !strings.Contains(n.Reason, "ingress-nginx/custom") {
		t.Errorf("no partial note naming the ConfigMap: %v", ctx.Notes())
	}
}
