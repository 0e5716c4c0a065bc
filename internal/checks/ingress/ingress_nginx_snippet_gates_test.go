package ingress

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func runSnippetGates(t *testing.T, file string) []finding.Finding {
	t.Helper()
	fs, _, ok := checktest.Run(t, ingressNginxSnippetGatesCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	checktest.EvidenceTrue(t, fs, file)
	return fs
}

// Before the 1.12.0 upgrade of issue 12621: snippets allowed, risk level
// unset, so only the 1.12 default stands between them and refusal: medium,
// naming the Ingress with the snippet and not the plain one.
func TestIngressNginxSnippetGatesBeforeUpgrade(t *testing.T) {
	fs := runSnippetGates(t, "ingress-nginx-snippet-gates/gap.yaml")
	if len(fs) != 1 {
		t.Fatalf("want 1 finding, got %+v", fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Rule != ruleSnippetsGate || len(f.Cases) != 1 || f.Cases[0] != caseSnippets {
		t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
	}
	if !checktest.HasObject(fs, "Ingress", "tooling", "keycloak") || checktest.HasObject(fs, "Ingress", "tooling", "plain") {
		t.Errorf("objects %v", f.Objects)
	}
	if !strings.Contains(f.Message, "annotations-risk-level is unset, and from 1.12.0") || strings.Contains(f.Message, "allow-snippet-annotations is unset") {
		t.Errorf("message %q", f.Message)
	}
}

// After the upgrade: high, the risk level is what refuses them.
func TestIngressNginxSnippetGatesRefused(t *testing.T) {
	fs := runSnippetGates(t, "ingress-nginx-snippet-gates/upgraded.yaml")
	if len(fs) != 1 || fs[0].Severity != finding.High || !strings.Contains(fs[0].Message, "snippets need Critical") {
		t.Fatalf("want one high finding on the risk level, got %+v", fs)
	}
}

// 1.8 with both keys unset: medium, both upgrades named.
func TestIngressNginxSnippetGatesOldDefaults(t *testing.T) {
	fs := runSnippetGates(t, "ingress-nginx-snippet-gates/old-default.yaml")
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Message, "from 1.9.0") || !strings.Contains(fs[0].Message, "from 1.12.0") {
		t.Fatalf("want one medium finding naming both upgrades, got %+v", fs)
	}
}

// Both gates open as the maintainers advise: quiet.
func TestIngressNginxSnippetGatesClean(t *testing.T) {
	checktest.Quiet(t, ingressNginxSnippetGatesCheck(), checktest.Complete(checktest.Load(t, "ingress-nginx-snippet-gates/clean.yaml")))
}

// A controller reading another ConfigMap: partial, never a pass.
func TestIngressNginxSnippetGatesOtherConfigMap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "ingress-nginx-snippet-gates/upgraded.yaml"))
	s.Deployments[0].Spec.Template.Spec.Containers[0].Args[2] = "--configmap=$(POD_NAMESPACE)/custom"
	fs, ctx, _ := checktest.Run(t, ingressNginxSnippetGatesCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings with the settings unknown: %v", fs)
	}
	if n, ok := ctx.Notes()[ruleSnippetsGate]; !ok || !strings.Contains(n.Reason, "ingress-nginx/custom") {
		t.Errorf("no partial note naming the ConfigMap: %v", ctx.Notes())
	}
}

// The controller parses allow-snippet-annotations as a boolean and the
// risk level without regard to case: "True" and "critical" open both
// gates, so the upgraded controller is quiet.
func TestIngressNginxSnippetGatesSpellings(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "ingress-nginx-snippet-gates/upgraded.yaml"))
	s.ConfigMaps[0].Data = map[string]string{"allow-snippet-annotations": "True", "annotations-risk-level": "critical"}
	checktest.Quiet(t, ingressNginxSnippetGatesCheck(), s)
}
