package certs

import (
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// testNow is the fixtures' clock: they were made with end dates around it.
var testNow = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

func atTestNow(t *testing.T) {
	t.Helper()
	old := now
	now = func() time.Time { return testNow }
	t.Cleanup(func() { now = old })
}

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func bySeverity(fs []finding.Finding) map[string]finding.Severity {
	out := map[string]finding.Severity{}
	for _, f := range fs {
		for _, o := range f.Objects {
			out[o.Kind+"/"+o.Namespace+"/"+o.Name] = f.Severity
		}
	}
	return out
}

func TestCertificateExpiryGap(t *testing.T) {
	atTestNow(t)
	s := checktest.Complete(checktest.Load(t, "certificate-expiry/gap.yaml"))
	fs, ctx, ok := checktest.Run(t, certificateExpiryCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := bySeverity(fs)
	want := map[string]finding.Severity{
		"ValidatingWebhookConfiguration//auto-tracing-validator": finding.Critical, // expired, fails closed
		"APIService//v1beta1.metrics.k8s.io":                     finding.High,     // 20 days left
		"CustomResourceDefinition//widgets.example.com":          finding.Medium,   // 75 days
		"ConfigMap/kube-system/kube-root-ca.crt":                 finding.Medium,   // 60 days
		"ConfigMap/linkerd/linkerd-identity-trust-roots":         finding.Low,      // one-year root, no owner
		"Certificate/payments/webhook-serving":                   finding.High,     // 9 days, renewal overdue
	}
	for obj, sev := range want {
		if got[obj] != sev {
			t.Errorf("%s: severity %v, want %v (findings: %v)", obj, got[obj], sev, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d objects reported, want %d: %v", len(got), len(want), got)
	}
	// The bad bundle is a partial note, not a finding and not a silent pass.
	note, ok := ctx.Notes()["webhook-ca-bundles"]
	if !ok || !strings.Contains(note.Reason, "broken-bundle") || note.Skipped {
		t.Errorf("webhook-ca-bundles note = %+v, want a partial note naming broken-bundle", note)
	}
	for _, f := range fs {
		if f.Objects[0].Name == "auto-tracing-validator" && !strings.Contains(f.Message, "every request the webhook matches is rejected") {
			t.Errorf("expired fail-closed webhook message does not say what happens: %s", f.Message)
		}
	}
}

func TestCertificateExpiryClean(t *testing.T) {
	atTestNow(t)
	s := checktest.Complete(checktest.Load(t, "certificate-expiry/clean.yaml"))
	fs, ctx, ok := checktest.Run(t, certificateExpiryCheck(), s)
	if !ok || len(fs) != 0 {
		t.Fatalf("evaluated=%v findings=%v", ok, fs)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes on a clean, complete input: %v", n)
	}
}

// From plain files cert-manager Certificates are not complete: a one-year
// root is then unknown (partial), never reported as ownerless.
func TestOneYearRootNeedsCompleteOwners(t *testing.T) {
	atTestNow(t)
	s := checktest.Load(t, "certificate-expiry/gap.yaml")
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), s)
	if checktest.HasObject(fs, "ConfigMap", "linkerd", "linkerd-identity-trust-roots") {
		t.Error("one-year root reported as ownerless although Certificates are not complete")
	}
	if _, ok := ctx.Notes()["one-year-roots"]; !ok {
		t.Error("no partial note for one-year-roots")
	}
}

// The same gap a year earlier is silent: the clock is the check's.
func TestCertificateExpiryUsesItsClock(t *testing.T) {
	old := now
	now = func() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }
	defer func() { now = old }()
	s := checktest.Complete(checktest.Load(t, "certificate-expiry/gap.yaml"))
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), s)
	for _, f := range fs {
		if f.Severity > finding.Low {
			t.Errorf("in 2025: %s %q", f.Severity, f.Title)
		}
	}
}

func TestV1beta1WebhookDefaultsToIgnore(t *testing.T) {
	if failsClosed(nil, map[string]string{originalAPIVersionAnnotation: "admissionregistration.k8s.io/v1beta1"}) {
		t.Error("a v1beta1 webhook without failurePolicy fails closed")
	}
	if !failsClosed(nil, nil) {
		t.Error("a v1 webhook without failurePolicy does not fail closed")
	}
}

func TestParseBundle(t *testing.T) {
	for _, bad := range []string{"", "not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"} {
		if _, err := parseBundle([]byte(bad)); err == nil {
			t.Errorf("parseBundle(%q) gave no error", bad)
		}
	}
}

func FuzzParseBundle(f *testing.F) {
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"))
	f.Add([]byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"))
	f.Add([]byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		certs, err := parseBundle(data)
		if err == nil && len(certs) == 0 {
			t.Error("no error and no certificate")
		}
		if err == nil {
			latest(certs)
		}
	})
}

func TestFactsParse(t *testing.T) {
	f, err := loadExpiryFacts()
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := f.failDays(); d != 30 {
		t.Errorf("fail horizon %d days, want the GKE 30", d)
	}
}

func TestFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

// TestCertificateExpiryEvidenceItems: every finding quotes the field its
// dates are read from, as the object writes it (a caBundle in base64, a
// ConfigMap's PEM, cert-manager's status.notAfter), with the fields that
// decide its severity (failurePolicy, insecureSkipTLSVerify, the
// conversion strategy, renewalTime and the Ready condition), and each item
// resolves against the fixture.
func TestCertificateExpiryEvidenceItems(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/gap.yaml"
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	// Per reported object, the item's paths and the values short enough
	// to write here ("*" where the value is a certificate bundle).
	want := map[string][][2]string{
		"auto-tracing-validator": {{"webhooks[name=validate.auto-tracing.example.com].clientConfig.caBundle", "*"},
			{"webhooks[name=validate.auto-tracing.example.com].failurePolicy", "Fail"}},
		"v1beta1.metrics.k8s.io":       {{"spec.caBundle", "*"}, {"spec.insecureSkipTLSVerify", ""}},
		"widgets.example.com":          {{"spec.conversion.webhook.clientConfig.caBundle", "*"}, {"spec.conversion.strategy", "Webhook"}},
		"kube-root-ca.crt":             {{"data[ca.crt]", "*"}},
		"linkerd-identity-trust-roots": {{"data[ca-bundle.crt]", "*"}},
		"webhook-serving": {{"status.notAfter", "2026-06-10T00:00:00Z"}, {"status.renewalTime", "2026-05-11T00:00:00Z"},
			{"status.conditions[type=Ready].status", "False"}, {"status.conditions[type=Ready].reason", "Failed"},
			{"status.conditions[type=Ready].message", "issuer not ready"}},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings, want %d", len(fs), len(want))
	}
	for _, f := range fs {
		w := want[f.Objects[0].Name]
		if len(f.EvidenceItems) != 1 || len(f.EvidenceItems[0].Fields) != len(w) || f.EvidenceItems[0].Objects[0] != f.Objects[0] {
			t.Errorf("%q: items %v, want one on %v with fields %v", f.Title, f.EvidenceItems, f.Objects[0], w)
			continue
		}
		for i, fl := range f.EvidenceItems[0].Fields {
			switch {
			case fl.Path != w[i][0]:
				t.Errorf("%q: field %d path %q, want %q", f.Title, i, fl.Path, w[i][0])
			case w[i][1] == "*" && !strings.Contains(fl.Value, "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t") && !strings.HasPrefix(fl.Value, "-----BEGIN CERTIFICATE-----"):
				t.Errorf("%q: %s is not the bundle as written: %.60q", f.Title, fl.Path, fl.Value)
			case w[i][1] == "" && !fl.Absent, w[i][1] != "" && w[i][1] != "*" && fl.Value != w[i][1]:
				t.Errorf("%q: %s = %q (absent %v), want %q", f.Title, fl.Path, fl.Value, fl.Absent, w[i][1])
			}
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
}

// TestCertificateExpiryReadyWithoutReason: a Ready condition without
// reason or message is quoted with both absent; the evidence used to print
// "status.conditions[Ready]: False (<nil>) <nil>".
func TestCertificateExpiryReadyWithoutReason(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/ready-without-reason.yaml"
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 1 || fs[0].Severity != finding.High {
		t.Fatalf("findings %+v, want the one high renewal finding", fs)
	}
	want := "Certificate/shop/api-serving: status.notAfter=2026-06-10T00:00:00Z, status.renewalTime=2026-05-11T00:00:00Z, " +
		"status.conditions[type=Ready].status=False, status.conditions[type=Ready].reason absent, status.conditions[type=Ready].message absent"
	if len(fs[0].EvidenceItems) != 1 || fs[0].EvidenceItems[0].String() != want {
		t.Errorf("items %v, want %q", fs[0].EvidenceItems, want)
	}
	for _, e := range fs[0].Evidence {
		if strings.Contains(e, "<nil>") {
			t.Errorf("evidence prints a missing field as <nil>: %q", e)
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 1 {
		t.Errorf("%d items resolved, want 1", n)
	}
}

// TestCertificateExpiryFirstLineIsOneLine: the first evidence line, which
// briefs show alone, is the one-line date summary, never the PEM quote.
func TestCertificateExpiryFirstLineIsOneLine(t *testing.T) {
	atTestNow(t)
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/gap.yaml")))
	for _, f := range fs {
		if len(f.Evidence) == 0 || strings.Contains(f.Evidence[0], "\n") {
			t.Errorf("%q: first evidence line %q", f.Title, f.Evidence)
		}
	}
}
