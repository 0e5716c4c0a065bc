package certs

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// Dapr 1.7.2 keeps its root in a Secret only: 285 days after the Sentry
// Deployment was created, a medium finding says when a root generated at
// install would end, that this is inferred, and the rule stays partial.
func TestCertificateExpiryDaprSecretOnly(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/dapr-secret-only.yaml"
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || !slices.Contains(f.Cases, caseDaprSentry) || !checktest.HasObject(fs, "Deployment", "dapr-system", "dapr-sentry") {
		t.Errorf("finding %+v: want medium on dapr-system/dapr-sentry citing %s", f, caseDaprSentry)
	}
	for _, want := range []string{"2026-08-20, in 80 days", "inferred from the Deployment's age", "never reads the Secret"} {
		if !strings.Contains(f.Title+" "+f.Message, want) {
			t.Errorf("finding does not say %q: %s / %s", want, f.Title, f.Message)
		}
	}
	if n, ok := ctx.Notes()[ruleDaprRoot]; !ok || n.Skipped || !strings.Contains(n.Reason, "end date is unknown") {
		t.Errorf("notes %v, want %s partial: the real end date is unknown", ctx.Notes(), ruleDaprRoot)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 1 {
		t.Errorf("%d evidence items, want the Deployment's image and creation time", n)
	}
}

// A young Dapr 1.7 install is no finding, but never a pass: the root is
// out of sight.
func TestCertificateExpiryDaprSecretOnlyYoung(t *testing.T) {
	old := testNow
	testNow = testNow.AddDate(0, -6, 0)
	t.Cleanup(func() { testNow = old })
	atTestNow(t)
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/dapr-secret-only.yaml")))
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if _, ok := ctx.Notes()[ruleDaprRoot]; !ok {
		t.Errorf("notes %v, want %s partial", ctx.Notes(), ruleDaprRoot)
	}
}

// Dapr 1.14 publishes the root in ConfigMap dapr-system/dapr-trust-bundle:
// its real end date, 60 days away, is medium, citing the case.
func TestCertificateExpiryDaprConfigMap(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/dapr-configmap.yaml"
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !checktest.HasObject(fs, "ConfigMap", "dapr-system", "dapr-trust-bundle") ||
		!slices.Contains(fs[0].Cases, caseDaprSentry) || !strings.Contains(fs[0].Message, "expires on 2026-07-31, in 60 days") {
		t.Fatalf("findings %+v, want one medium on the Dapr trust bundle citing %s", fs, caseDaprSentry)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v", ctx.Notes())
	}
	checktest.EvidenceTrue(t, fs, file)
}

func TestCertificateExpiryDaprClean(t *testing.T) {
	atTestNow(t)
	checktest.Quiet(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/dapr-clean.yaml")))
}

// Dapr 1.12+ outside dapr-system publishes its root where kubegap does
// not look: unknown, never pass.
func TestCertificateExpiryDaprOtherNamespace(t *testing.T) {
	atTestNow(t)
	s := checktest.Complete(checktest.Load(t, "certificate-expiry/dapr-clean.yaml"))
	s.Deployments[0].Namespace = "dapr"
	s.ConfigMaps = nil
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if n, ok := ctx.Notes()[ruleDaprRoot]; !ok || !strings.Contains(n.Reason, "does not read") {
		t.Errorf("notes %v, want %s partial", ctx.Notes(), ruleDaprRoot)
	}
}
