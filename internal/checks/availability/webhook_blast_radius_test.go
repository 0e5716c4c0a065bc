package availability

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
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
	// v1beta1 as k8s.io/api documents it: Ignore, 30 seconds.
	if d, _ := f.defaultsFor("admissionregistration.k8s.io/v1beta1"); d.FailurePolicy != admissionv1.Ignore || d.TimeoutSeconds != 30 {
		t.Errorf("v1beta1 defaults %+v", d)
	}
	const ok = "defaults: {failurePolicy: Fail, timeoutSeconds: 10}\nnamespaceNameLabel: x\ncriticalNamespaces: [kube-system]\nsystemExemptions: [a]\nsources: [s]\n"
	if _, err := parseWebhookFacts([]byte(ok)); err != nil {
		t.Fatalf("rejected a good table: %v", err)
	}
	for _, bad := range []string{
		strings.Replace(ok, "Fail", "Sometimes", 1),
		strings.Replace(ok, "10}", "31}", 1),
		strings.Replace(ok, "[kube-system]", "[]", 1),
		strings.Replace(ok, "[a]", "[]", 1),
		strings.Replace(ok, "[a]", "['(']", 1),
		ok + "versionDefaults: {v1beta1: {failurePolicy: Maybe, timeoutSeconds: 30}}\n",
		ok + "extra: 1\n",
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
		{"everything, update only", rule([]string{"*"}, []string{"*"}, admissionv1.Update, nil), false, false},
		{"everything, delete only", rule([]string{"*"}, []string{"*/*"}, admissionv1.Delete, nil), false, false},
		{"everything, all operations", rule([]string{"*"}, []string{"*"}, admissionv1.OperationAll, nil), true, true},
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
	s := checktest.Load(t, "webhook-blast-radius/gap.yaml")
	// As a live read would: every Service and EndpointSlice is there, so a
	// Service missing from them does not exist.
	s.SetComplete(snapshot.Services, nil)
	s.SetComplete(snapshot.EndpointSlices, nil)
	fs, _, ok := checktest.Run(t, webhookBlastRadiusCheck(), s)
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
			message:  []string{"rejects every call it receives now"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := checktest.FindingAbout(fs, tc.kind, "", tc.name)
			if !ok {
				t.Fatalf("no finding about %s %s", tc.kind, tc.name)
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %v, want %v: %s", f.Severity, tc.sev, f.Message)
			}
			for _, o := range tc.objects {
				p := strings.SplitN(o, "/", 3)
				if !checktest.HasObject([]finding.Finding{f}, p[0], p[1], p[2]) {
					t.Errorf("%s not named: %v", o, f.Objects)
				}
			}
			for _, e := range tc.evidence {
				if !checktest.EvidenceHas(f, e) {
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
			if got, ok := checktest.FindingAbout(fs, k, "", name); ok {
				f = got
			}
		}
		if got := slices.Contains(f.Cases, "dfds-alcide-admission-webhook-timeouts-2020"); got != want {
			t.Errorf("%s cites the timeout case: %v, want %v (%v)", name, got, want, f.Cases)
		}
	}
	// The other cases follow what each finding shows: a fail-closed rule
	// over every resource (opa), kube-system not excluded (opa,
	// policy-checker), its own namespace not excluded (all but the orphan,
	// which excludes it, and slow-labeler, which calls a URL).
	for _, tc := range []struct {
		kind, name                    string
		allResources, critical, owner bool
	}{
		{"ValidatingWebhookConfiguration", "opa-validating-webhook", true, true, true},
		{"ValidatingWebhookConfiguration", "policy-checker", false, true, true},
		{"MutatingWebhookConfiguration", "pod-injector", false, false, true},
		{"ValidatingWebhookConfiguration", "orphaned-webhook", false, false, false},
		{"MutatingWebhookConfiguration", "slow-labeler", false, false, false},
	} {
		f, _ := checktest.FindingAbout(fs, tc.kind, "", tc.name)
		for id, want := range map[string]bool{
			caseKyvernoOOMAllResources: tc.allResources, caseGatekeeperControlPlane: tc.allResources,
			caseKyvernoServiceCIDR: tc.allResources, caseKyvernoCAPIDeadlock: tc.critical, caseKyvernoStopStart: tc.owner,
		} {
			if got := slices.Contains(f.Cases, id); got != want {
				t.Errorf("%s cites %s: %v, want %v (%v)", tc.name, id, got, want, f.Cases)
			}
		}
	}
}

func TestWebhookBlastRadiusSilent(t *testing.T) {
	fs, _, ok := checktest.Run(t, webhookBlastRadiusCheck(), checktest.Load(t, "webhook-blast-radius/healthy.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	for _, f := range fs {
		t.Errorf("finding on a well-scoped webhook: %s: %s", f.Title, f.Message)
	}
}

func TestWebhookBlastRadiusWithoutNamespaces(t *testing.T) {
	fs, _, _ := checktest.Run(t, webhookBlastRadiusCheck(), checktest.Load(t, "webhook-blast-radius/no-namespaces.yaml"))
	if len(fs) != 1 {
		t.Fatalf("want 1 finding, got %+v", fs)
	}
	f := fs[0]
	// Unknown exclusion must not be reported as a certain one: medium, not high.
	if f.Severity != finding.Medium {
		t.Errorf("severity %v, want medium", f.Severity)
	}
	if !checktest.EvidenceHas(f, "kube-system exclusion unknown") {
		t.Errorf("evidence does not say the exclusion is unknown: %q", f.Evidence)
	}
	if !checktest.HasObject(fs, "Deployment", "gatekeeper-system", "gatekeeper-controller-manager") {
		t.Errorf("backing Deployment not named: %v", f.Objects)
	}

	// The same webhook with the Namespace objects: kube-system carries the
	// ignore label, so it is excluded, and with 3 ready replicas nothing is left.
	fs, _, _ = checktest.Run(t, webhookBlastRadiusCheck(), checktest.Load(t, "webhook-blast-radius/healthy.yaml"))
	if checktest.HasObject(fs, "ValidatingWebhookConfiguration", "", "gatekeeper-validating-webhook-configuration") {
		t.Error("gatekeeper reported although kube-system is excluded by label")
	}
}

// TestWebhookServiceNotInInputIsUnknown: issue 12, false finding 1. With
// only another namespace's Services in the input, the webhook's Service is
// unknown, not absent; the same file read as a complete cluster proves it
// absent.
func TestWebhookServiceNotInInputIsUnknown(t *testing.T) {
	c := webhookBlastRadiusCheck()
	s := checktest.Load(t, "webhook-blast-radius/other-namespace-services.yaml")
	ctx := &check.Context{Snapshot: s}
	fs, err := c.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f, ok := checktest.FindingAbout(fs, "ValidatingWebhookConfiguration", "", "kyverno-resource-validating-webhook-cfg")
	if !ok {
		t.Fatalf("the fail-closed pod webhook is not reported: %+v", fs)
	}
	if strings.Contains(f.Message, "does not exist") || strings.Contains(f.Message, "rejects every call") || checktest.EvidenceHas(f, "no such Service") {
		t.Errorf("a Service not in the input is reported missing: %s %q", f.Message, f.Evidence)
	}
	if !checktest.EvidenceHas(f, "kyverno/kyverno-svc: Service not in the input") {
		t.Errorf("evidence does not say the Service is unknown: %q", f.Evidence)
	}
	// What the objects prove stands: fail closed on pods, kube-system included.
	if f.Severity != finding.Medium || !strings.Contains(f.Message, "including kube-system") {
		t.Errorf("severity %v, message %s", f.Severity, f.Message)
	}
	if n, ok := ctx.Notes()[webhookRuleBackend]; !ok || !strings.Contains(n.Reason, "kyverno/kyverno-svc") {
		t.Errorf("the backend rule is not marked incomplete: %+v", ctx.Notes())
	}

	// Services complete in namespace kyverno: now the Service is proven gone.
	s.SetComplete(snapshot.Services, []string{"kyverno"})
	fs, _, _ = checktest.Run(t, c, s)
	if f, _ := checktest.FindingAbout(fs, "ValidatingWebhookConfiguration", "", "kyverno-resource-validating-webhook-cfg"); f.Severity != finding.High || !checktest.EvidenceHas(f, "no such Service") {
		t.Errorf("with every Service of kyverno read: %v %q", f.Severity, f.Evidence)
	}
}

// TestWebhookScopeNarrowed: issue 12, false findings 6 and 7.
func TestWebhookScopeNarrowed(t *testing.T) {
	ctx := &check.Context{Snapshot: checktest.Load(t, "webhook-blast-radius/scope.yaml")}
	fs, err := webhookBlastRadiusCheck().Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A matchCondition kubegap cannot evaluate leaves kube-system's
	// exclusion unknown: the rule says so rather than passing.
	n := ctx.Notes()[webhookRuleCritical]
	if !strings.Contains(n.Reason, "labelled-only") || strings.Contains(n.Reason, "humans-only") {
		t.Errorf("rule %s notes %q: want labelled-only unknown, humans-only judged", webhookRuleCritical, n.Reason)
	}
	if _, ok := checktest.FindingAbout(fs, "ValidatingWebhookConfiguration", "", "delete-guard"); ok {
		t.Error("a DELETE-only webhook is reported as blocking pod creation")
	}
	f, ok := checktest.FindingAbout(fs, "ValidatingWebhookConfiguration", "", "humans-only")
	switch {
	case !ok:
		// Exempting controllers lowers the risk; it does not prove none.
	case f.Severity > finding.Low:
		t.Errorf("a webhook that exempts system users is %v: %s", f.Severity, f.Message)
	case !strings.Contains(f.Message, "system users"):
		t.Errorf("message does not say controllers are exempt: %s", f.Message)
	}
	f, ok = checktest.FindingAbout(fs, "ValidatingWebhookConfiguration", "", "labelled-only")
	if ok {
		if f.Severity > finding.Medium {
			t.Errorf("a webhook narrowed by matchConditions is %v: %s", f.Severity, f.Message)
		}
		if !strings.Contains(f.Message, "matchCondition") || strings.Contains(f.Message, "in every namespace including") {
			t.Errorf("message claims every pod creation: %s", f.Message)
		}
	}
	for _, f := range fs {
		if f.Severity >= finding.Medium {
			t.Errorf("%s: %v %s", f.Title, f.Severity, f.Message)
		}
	}
}

// TestWebhookV1beta1Defaults: issue 12, false finding 14. An unset
// failurePolicy of a v1beta1 webhook is Ignore, its timeout 30 s.
func TestWebhookV1beta1Defaults(t *testing.T) {
	fs, _, _ := checktest.Run(t, webhookBlastRadiusCheck(), checktest.Load(t, "webhook-blast-radius/v1beta1.yaml"))
	f, ok := checktest.FindingAbout(fs, "MutatingWebhookConfiguration", "", "legacy-injector")
	if !ok {
		t.Fatalf("the 30 s default timeout on kube-system's pods is not reported: %+v", fs)
	}
	if f.Severity != finding.Low {
		t.Errorf("severity %v, want low: %s", f.Severity, f.Message)
	}
	for _, e := range []string{"failurePolicy=Ignore (unset; the admissionregistration.k8s.io/v1beta1 default)", "timeoutSeconds=30 (unset; the admissionregistration.k8s.io/v1beta1 default)"} {
		if !checktest.EvidenceHas(f, e) {
			t.Errorf("no evidence %q: %q", e, f.Evidence)
		}
	}
	if checktest.EvidenceHas(f, "failurePolicy=Fail") {
		t.Errorf("v1 defaults applied to a v1beta1 webhook: %q", f.Evidence)
	}
}

// The DFDS case: a fail-closed webhook on Service writes whose only backend
// pod is not ready.
func TestWebhookServiceWrites(t *testing.T) {
	c := webhookBlastRadiusCheck()
	fs, _, ok := checktest.Run(t, c, checktest.Complete(checktest.Load(t, "webhook-blast-radius/services-gap.yaml")))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	for _, o := range [][3]string{{"ValidatingWebhookConfiguration", "", "kyverno-resource-validating-webhook-cfg"},
		{"Service", "kyverno", "kyverno-svc"}, {"Deployment", "kyverno", "kyverno"}} {
		if !checktest.HasObject(fs, o[0], o[1], o[2]) {
			t.Errorf("finding does not name %v", o)
		}
	}
	if f.Severity != finding.High || !slices.Equal(f.Cases, []string{caseKyvernoServices}) {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	if !strings.Contains(f.Title, "Services") || strings.Contains(f.Message, "svc-ignore") ||
		!strings.Contains(strings.Join(f.Evidence, "\n"), "Service kyverno/kyverno-svc: 0 ready endpoints") {
		t.Errorf("title %q, message %q, evidence %v", f.Title, f.Message, f.Evidence)
	}

	// One ready replica left: a single point of failure, medium.
	s := checktest.Complete(checktest.Load(t, "webhook-blast-radius/services-gap.yaml"))
	ready := true
	s.EndpointSlices[0].Endpoints[0].Conditions.Ready = &ready
	fs, _, _ = checktest.Run(t, c, s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("one ready endpoint: %+v", fs)
	}

	fs, _, ok = checktest.Run(t, c, checktest.Complete(checktest.Load(t, "webhook-blast-radius/services-healthy.yaml")))
	if !ok || len(fs) != 0 {
		t.Errorf("three ready replicas: %+v", fs)
	}
}

// From files without the backend's EndpointSlices or Deployment, the
// backend's readiness is unknown: the rule is partial, not a pass.
func TestWebhookServiceWritesUnknownBackend(t *testing.T) {
	s := checktest.Load(t, "webhook-blast-radius/services-gap.yaml")
	s.EndpointSlices, s.Deployments = nil, nil
	ctx := &check.Context{Snapshot: s}
	fs, err := webhookBlastRadiusCheck().Run(ctx)
	if err != nil || len(fs) != 0 {
		t.Fatalf("err %v, findings %+v", err, fs)
	}
	if _, ok := ctx.Notes()[webhookRuleServices]; !ok {
		t.Errorf("no incomplete note for %s: %v", webhookRuleServices, ctx.Notes())
	}
}

func TestServiceWriteScope(t *testing.T) {
	for _, tc := range []struct {
		rule admissionv1.RuleWithOperations
		want bool
	}{
		{rule([]string{""}, []string{"services"}, admissionv1.Delete, nil), true},
		{rule([]string{"*"}, []string{"*"}, admissionv1.Update, nil), true},
		{rule([]string{""}, []string{"services"}, admissionv1.Connect, nil), false},
		{rule([]string{""}, []string{"configmaps"}, admissionv1.Create, nil), false},
		{rule([]string{"apps"}, []string{"*"}, admissionv1.Create, nil), false},
	} {
		if got := serviceWriteScope([]admissionv1.RuleWithOperations{tc.rule}) != ""; got != tc.want {
			t.Errorf("%+v: %v, want %v", tc.rule, got, tc.want)
		}
	}
}

// TestWebhookNetworkCutCitation: the network-cut case is cited, as detected
// (backend-policy-blocked reads the NetworkPolicy once it is in place), by
// the medium and high findings on fail-closed pod webhooks with an
// in-cluster backend Service and no matchConditions (KAI-Scheduler's
// webhooks before its fix, and gap.yaml's), and not by those on a URL
// backend or on a webhook narrowed by matchConditions (KAI after its fix),
// nor by low findings.
func TestWebhookNetworkCutCitation(t *testing.T) {
	c := webhookBlastRadiusCheck()
	if r, ok := c.Relation(casePodWebhooksNetworkCut); !ok || r != check.RelDetects {
		t.Fatalf("the check links %s as %q (cited %v), want detects", casePodWebhooksNetworkCut, r, ok)
	}
	cites := func(f finding.Finding) bool { return slices.Contains(f.Cases, casePodWebhooksNetworkCut) }

	fs, _, _ := checktest.Run(t, c, checktest.Load(t, "webhook-blast-radius/kai-scheduler-pre.yaml"))
	for _, name := range []string{"mutating-kai-admission", "validating-kai-admission"} {
		f, ok := findingByTitle(fs, name)
		switch {
		case !ok:
			t.Errorf("no finding about %s", name)
		case f.Severity < finding.Medium || !cites(f):
			t.Errorf("%s: %v, cases %v: want medium or higher citing %s", name, f.Severity, f.Cases, casePodWebhooksNetworkCut)
		}
	}

	fs, _, _ = checktest.Run(t, c, checktest.Load(t, "webhook-blast-radius/network-cut-other-shapes.yaml"))
	if f, ok := findingByTitle(fs, "labelled-gate"); !ok || f.Severity < finding.Medium || slices.Contains(f.Cases, caseLinkerdInjectorKubeSystem) {
		t.Errorf("labelled-gate (kube-system coverage unknown): found %v, %v, cases %v; want medium or higher without %s", ok, f.Severity, f.Cases, caseLinkerdInjectorKubeSystem)
	}
	for _, name := range []string{"mutating-kai-admission", "remote-policy", "labelled-gate"} {
		f, ok := findingByTitle(fs, name)
		switch {
		case !ok || f.Severity < finding.Medium:
			t.Errorf("%s: want a medium or higher finding to test against (found %v)", name, ok)
		case cites(f):
			t.Errorf("%s cites %s, whose shape (an in-cluster backend covering every pod) it does not have", name, casePodWebhooksNetworkCut)
		}
	}

	s := checktest.Load(t, "webhook-blast-radius/gap.yaml")
	s.SetComplete(snapshot.Services, nil)
	s.SetComplete(snapshot.EndpointSlices, nil)
	fs, _, _ = checktest.Run(t, c, s)
	for _, f := range fs {
		if f.Severity < finding.Medium && cites(f) {
			t.Errorf("%s is %v but cites %s", f.Title, f.Severity, casePodWebhooksNetworkCut)
		}
	}
	if f, ok := findingByTitle(fs, "policy-checker"); !ok || !slices.Contains(f.Cases, caseLinkerdInjectorKubeSystem) {
		t.Errorf("policy-checker (fail-closed over kube-system): found %v, cases %v; want %s cited", ok, f.Cases, caseLinkerdInjectorKubeSystem)
	}
	if f, ok := findingByTitle(fs, "pod-injector"); !ok || !cites(f) {
		t.Errorf("pod-injector (fail-closed, one replica behind a Service): found %v, cases %v; want %s cited", ok, f.Cases, casePodWebhooksNetworkCut)
	}
}

// findingByTitle returns the finding whose title names the configuration.
func findingByTitle(fs []finding.Finding, cfgName string) (finding.Finding, bool) {
	for _, f := range fs {
		if strings.Contains(f.Title, " "+cfgName+" ") {
			return f, true
		}
	}
	return finding.Finding{}, false
}

// TestWebhookBackendPolicyBlocked: KAI's webhooks behind a NetworkPolicy
// that admits only pods are high, citing the network-cut case, with two
// replicas too; a policy rule open to every source on the port, or one
// with an ipBlock peer, clears it, and so does a backend on the host
// network, to which NetworkPolicies do not apply.
func TestWebhookBackendPolicyBlocked(t *testing.T) {
	const podSpec = "    spec: {containers: [{name: admission,"
	hostNet := false
	load := func(t *testing.T, policy string) *snapshot.Snapshot {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("testdata", "webhook-blast-radius", "kai-scheduler-pre.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		two := strings.Replace(string(raw), "replicas: 1", "replicas: 2", 1)
		if hostNet {
			if !strings.Contains(two, podSpec) {
				t.Fatal("kai-scheduler-pre.yaml no longer holds the admission pod spec the hostNetwork variant edits")
			}
			two = strings.Replace(two, podSpec, "    spec: {hostNetwork: true, containers: [{name: admission,", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, "kai.yaml"), []byte(two), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "policy.yaml"), []byte(policy), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.LoadPaths([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		return checktest.Complete(s)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", "webhook-blast-radius", "kai-scheduler-policy-cut.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cut := string(raw)
	fs, _, _ := checktest.Run(t, webhookBlastRadiusCheck(), load(t, cut))
	for _, name := range []string{"mutating-kai-admission", "validating-kai-admission"} {
		f, ok := findingByTitle(fs, name)
		if !ok || f.Severity != finding.High || !slices.Contains(f.Cases, casePodWebhooksNetworkCut) ||
			!checktest.HasObject([]finding.Finding{f}, "NetworkPolicy", "infrastructure", "infrastructure-default") {
			t.Errorf("%s behind the policy: found %v, %v, cases %v, objects %v; want high citing %s and naming the policy",
				name, ok, f.Severity, f.Cases, f.Objects, casePodWebhooksNetworkCut)
		}
	}
	rule := "  - from:\n    - podSelector: {}\n    ports:\n    - {port: 9443, protocol: TCP}"
	if !strings.Contains(cut, rule) {
		t.Fatal("kai-scheduler-policy-cut.yaml no longer holds the rule the variants replace")
	}
	for _, tc := range []struct {
		name, rule string
		high       bool
	}{
		{"open to every source on the port", "  - ports:\n    - {port: 9443, protocol: TCP}", false},
		{"an ipBlock peer", "  - from:\n    - ipBlock: {cidr: 10.0.0.0/8}\n    ports:\n    - {port: 9443, protocol: TCP}", false},
		{"open on another port only", "  - ports:\n    - {port: 8080, protocol: TCP}", true},
	} {
		fs, _, _ = checktest.Run(t, webhookBlastRadiusCheck(), load(t, strings.Replace(cut, rule, tc.rule, 1)))
		f, ok := findingByTitle(fs, "mutating-kai-admission")
		if high := ok && f.Severity == finding.High; high != tc.high {
			t.Errorf("%s: high %v, want %v (%+v)", tc.name, high, tc.high, f)
		}
	}
	hostNet = true
	fs, _, _ = checktest.Run(t, webhookBlastRadiusCheck(), load(t, cut))
	if f, ok := findingByTitle(fs, "mutating-kai-admission"); ok && (f.Severity == finding.High || slices.Contains(f.Cases, casePodWebhooksNetworkCut) && checktest.HasObject([]finding.Finding{f}, "NetworkPolicy", "infrastructure", "infrastructure-default")) {
		t.Errorf("backend on the host network behind the same policy: %v naming the policy, want neither high nor the policy (%+v)", f.Severity, f)
	}
}

// TestWebhookKruiseCitation: OpenKruise's mpod.kb.io as the 1.5.0 chart
// writes it (fail-closed on every pod create, kube-system covered) is
// flagged medium with two ready replicas, citing the Kruise case as
// prevented; the 1.5.2 chart as amended by charts 92 (kube-system exempt,
// two replicas) is quiet.
func TestWebhookKruiseCitation(t *testing.T) {
	c := webhookBlastRadiusCheck()
	if r, ok := c.Relation(caseKruisePodWebhook); !ok || r != check.RelPrevents {
		t.Fatalf("the check links %s as %q (cited %v), want prevents", caseKruisePodWebhook, r, ok)
	}
	fs, _, _ := checktest.Run(t, c, checktest.Complete(checktest.Load(t, "webhook-blast-radius/kruise-1.5.0-pre.yaml")))
	f, ok := findingByTitle(fs, "kruise-mutating-webhook-configuration")
	switch {
	case !ok:
		t.Fatalf("no finding about kruise-mutating-webhook-configuration: %v", fs)
	case f.Severity != finding.Medium || !slices.Contains(f.Cases, caseKruisePodWebhook):
		t.Errorf("Kruise 1.5.0: %v, cases %v; want medium citing %s", f.Severity, f.Cases, caseKruisePodWebhook)
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "mpod.kb.io") || strings.Contains(strings.Join(f.Evidence, "\n"), "msidecarset.kb.io") {
		t.Errorf("Kruise 1.5.0 evidence should name mpod.kb.io and not the SidecarSet webhook: %v", f.Evidence)
	}
	checktest.Quiet(t, c, checktest.Complete(checktest.Load(t, "webhook-blast-radius/kruise-1.5.2.yaml")))
}
