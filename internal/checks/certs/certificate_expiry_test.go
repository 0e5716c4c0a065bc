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
