package checks

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/library"
)

func TestWebhookFactsData(t *testing.T) {
	f, err := loadWebhookFacts()
	if err != nil {
		t.Fatalf("embedded facts: %v", err)
	}
	// The API defaults as k8s.io/api documents them.
	if f.Defaults.FailurePolicy != admissionv1.Fail || f.Defaults.TimeoutSeconds != 10 {
		t.Errorf("defaults %+v", f.Defaults)
	}
	if f.NamespaceNameLabel != "kubernetes.io/metadata.name" {
		t.Errorf("namespace name label %q", f.NamespaceNameLabel)
	}
	for _, bad := range []string{
		"defaults: {failurePolicy: Sometimes, timeoutSeconds: 10}\nnamespaceNameLabel: x\ncriticalNamespaces: [kube-system]\nsources: [s]\n",
		"defaults: {failurePolicy: Fail, timeoutSeconds: 31}\nnamespaceNameLabel: x\ncriticalNamespaces: [kube-system]\nsources: [s]\n",
		"defaults: {failurePolicy: Fail, timeoutSeconds: 10}\nnamespaceNameLabel: x\ncriticalNamespaces: []\nsources: [s]\n",
		"defaults: {failurePolicy: Fail, timeoutSeconds: 10}\nnamespaceNameLabel: x\ncriticalNamespaces: [kube-system]\nsources: [s]\nextra: 1\n",
	} {
		if _, err := parseWebhookFacts([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestWebhookScope(t *testing.T) {
	all := admissionv1.AllScopes
	cluster := admissionv1.ClusterScope
	tests := []struct {
		name       string
		rule       admissionv1.RuleWithOperations
		pods, wide bool
	}{
		{"pods create", rule([]string{""}, []string{"pods"}, admissionv1.Create, nil), true, false},
		{"pods update only", rule([]string{""}, []string{"pods"}, admissionv1.Update, nil), false, false},
		{"pod subresource", rule([]string{""}, []string{"pods/exec"}, admissionv1.OperationAll, nil), false, false},
		{"all ops on pods", rule([]string{""}, []string{"pods"}, admissionv1.OperationAll, &all), true, false},
		{"cluster scope", rule([]string{""}, []string{"pods"}, admissionv1.Create, &cluster), false, false},
		{"everything", rule([]string{"*"}, []string{"*"}, admissionv1.Update, nil), false, true},
		{"everything create", rule([]string{"*"}, []string{"*/*"}, admissionv1.Create, nil), true, true},
		{"one group, all its resources", rule([]string{"cert-manager.io"}, []string{"*"}, admissionv1.Create, nil), false, false},
		{"deployments", rule([]string{"apps"}, []string{"deployments"}, admissionv1.Create, nil), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pods, wide, _ := webhookScope([]admissionv1.RuleWithOperations{tc.rule})
			if pods != tc.pods || wide != tc.wide {
				t.Errorf("podsCreate=%v allResources=%v, want %v %v", pods, wide, tc.pods, tc.wide)
			}
		})
	}
}

func rule(groups, resources []string, op admissionv1.OperationType, scope *admissionv1.ScopeType) admissionv1.RuleWithOperations {
	return admissionv1.RuleWithOperations{
		Operations: []admissionv1.OperationType{op},
		Rule:       admissionv1.Rule{APIGroups: groups, APIVersions: []string{"*"}, Resources: resources, Scope: scope},
	}
}

func TestWebhookBlastRadiusFires(t *testing.T) {
	fs, ok := runCheck(t, webhookBlastRadiusCheck(), loadFixture(t, "webhook-blast-radius/gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	tests := []struct {
		kind, name string
		sev        finding.Severity
		objects    []string // kind/ns/name
		evidence   []string
		message    []string
	}{
		{
			kind: "ValidatingWebhookConfiguration", name: "opa-validating-webhook", sev: finding.High,
			objects:  []string{"Service/opa/opa", "Deployment/opa/opa"},
			evidence: []string{"failurePolicy=Fail (unset; the API default)", "timeoutSeconds=10 (unset; the API default)", "Service opa/opa: 1 ready endpoint", "Deployment opa/opa spec.replicas=1", "kube-system not excluded"},
			message:  []string{"every resource", "including kube-system", "own namespace opa"},
		},
		{
			kind: "MutatingWebhookConfiguration", name: "pod-injector", sev: finding.Medium,
			objects:  []string{"Service/injector/injector", "Deployment/injector/injector"},
			evidence: []string{"kube-system excluded", "own namespace injector not excluded", "Service injector/injector: 1 ready endpoint"},
			message:  []string{"single point of failure"},
		},
		{
			kind: "ValidatingWebhookConfiguration", name: "policy-checker", sev: finding.Medium,
			evidence: []string{"Service policy/checker: 3 ready endpoints", "kube-system not excluded"},
			message:  []string{"stops kube-system's pods too"},
		},
		{
			kind: "MutatingWebhookConfiguration", name: "slow-labeler", sev: finding.Low,
			evidence: []string{"timeoutSeconds=30", "clientConfig.url=https://labeler.example.com/mutate"},
		},
		{
			kind: "ValidatingWebhookConfiguration", name: "orphaned-webhook", sev: finding.High,
			objects:  []string{"Service/orphan/gone"},
			evidence: []string{"clientConfig.service=orphan/gone: no such Service"},
			message:  []string{"rejects every call now"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := findingAbout(fs, tc.kind, "", tc.name)
			if !ok {
				t.Fatalf("no finding about %s %s", tc.kind, tc.name)
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %v, want %v: %s", f.Severity, tc.sev, f.Message)
			}
			for _, o := range tc.objects {
				p := strings.SplitN(o, "/", 3)
				if !hasObject([]finding.Finding{f}, p[0], p[1], p[2]) {
					t.Errorf("%s not named: %v", o, f.Objects)
				}
			}
			for _, e := range tc.evidence {
				if !evidenceHas(f, e) {
					t.Errorf("no evidence has %q: %q", e, f.Evidence)
				}
			}
			for _, m := range tc.message {
				if !strings.Contains(f.Message, m) {
					t.Errorf("message lacks %q: %s", m, f.Message)
				}
			}
		})
	}
	if len(fs) != len(tests) {
		t.Errorf("got %d findings, want %d", len(fs), len(tests))
	}
	// Long timeouts cite the DFDS case; short ones do not.
	for name, want := range map[string]bool{"slow-labeler": true, "pod-injector": false} {
		var f finding.Finding
		for _, k := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
			if got, ok := findingAbout(fs, k, "", name); ok {
				f = got
			}
		}
		if got := slices.Contains(f.Cases, "dfds-alcide-admission-webhook-timeouts-2020"); got != want {
			t.Errorf("%s cites the timeout case: %v, want %v (%v)", name, got, want, f.Cases)
		}
	}
}

func TestWebhookBlastRadiusSilent(t *testing.T) {
	fs, ok := runCheck(t, webhookBlastRadiusCheck(), loadFixture(t, "webhook-blast-radius/healthy.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	for _, f := range fs {
		t.Errorf("finding on a well-scoped webhook: %s: %s", f.Title, f.Message)
	}
}

func TestWebhookBlastRadiusWithoutNamespaces(t *testing.T) {
	fs, _ := runCheck(t, webhookBlastRadiusCheck(), loadFixture(t, "webhook-blast-radius/no-namespaces.yaml"))
	if len(fs) != 1 {
		t.Fatalf("want 1 finding, got %+v", fs)
	}
	f := fs[0]
	// Unknown exclusion must not be reported as a certain one: medium, not high.
	if f.Severity != finding.Medium {
		t.Errorf("severity %v, want medium", f.Severity)
	}
	if !evidenceHas(f, "kube-system exclusion unknown") {
		t.Errorf("evidence does not say the exclusion is unknown: %q", f.Evidence)
	}
	if !hasObject(fs, "Deployment", "gatekeeper-system", "gatekeeper-controller-manager") {
		t.Errorf("backing Deployment not named: %v", f.Objects)
	}

	// The same webhook with the Namespace objects: kube-system carries the
	// ignore label, so it is excluded, and with 3 ready replicas nothing is left.
	fs, _ = runCheck(t, webhookBlastRadiusCheck(), loadFixture(t, "webhook-blast-radius/healthy.yaml"))
	if hasObject(fs, "ValidatingWebhookConfiguration", "", "gatekeeper-validating-webhook-configuration") {
		t.Error("gatekeeper reported although kube-system is excluded by label")
	}
}

// TestWorkloadChecksCiteLibraryCases keeps the cited case IDs in step with
// the library: a finding citing a missing case is a bug.
func TestWorkloadChecksCiteLibraryCases(t *testing.T) {
	for _, c := range []Check{pdbBlocksDrainCheck(), podSandboxFailuresCheck(), imagePullAlwaysCheck(), webhookBlastRadiusCheck()} {
		for _, id := range c.Cases {
			if _, err := fs.Stat(library.FS, "cases/"+id+".yaml"); err != nil {
				t.Errorf("%s cites %s, which the library lacks: %v", c.ID, id, err)
			}
		}
	}
	sigs, _ := loadSandboxSignatures()
	for _, s := range sigs {
		for _, id := range s.Cases {
			if _, err := fs.Stat(library.FS, "cases/"+id+".yaml"); err != nil {
				t.Errorf("sandbox signature %s cites %s, which the library lacks", s.ID, id)
			}
		}
	}
}
