package certs

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// A Cluster API control-plane node created 300 days ago: medium, on that
// node only (not the as-old worker, not a control-plane node Cluster API
// did not make), saying when one-year certificates from its creation end
// and that this is inferred; the rule stays partial.
func TestCertificateExpiryCAPINodeAge(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/capi-node-age.yaml"
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 1 {
		t.Fatalf("findings %+v, want one", fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || !slices.Contains(f.Cases, caseCAPINodeAge) || !checktest.HasObject(fs, "Node", "", "tkc-prod-control-plane-7xk2p") {
		t.Errorf("finding %+v: want medium on Node tkc-prod-control-plane-7xk2p citing %s", f, caseCAPINodeAge)
	}
	for _, want := range []string{"2026-08-05, in 65 days", "inferred from the Node's creation time", "rolloutBefore.certificatesExpiryDays"} {
		if !strings.Contains(f.Title+" "+f.Message, want) {
			t.Errorf("finding does not say %q: %s / %s", want, f.Title, f.Message)
		}
	}
	if n, ok := ctx.Notes()[ruleCAPINodeAge]; !ok || n.Skipped || !strings.Contains(n.Reason, "inferred") {
		t.Errorf("notes %v, want %s partial", ctx.Notes(), ruleCAPINodeAge)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 1 {
		t.Errorf("%d evidence items, want the Node's Machine annotation and creation time", n)
	}
}

// After a rollout the control-plane node is 100 days old: no finding, but
// the rule is still partial, since the dates are inferred.
func TestCertificateExpiryCAPINodeYoung(t *testing.T) {
	atTestNow(t)
	fs, ctx, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/capi-node-young.yaml")))
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if _, ok := ctx.Notes()[ruleCAPINodeAge]; !ok {
		t.Errorf("notes %v, want %s partial", ctx.Notes(), ruleCAPINodeAge)
	}
}

// A node past a year still reports, and says that a serving API server
// means the certificates were renewed in place.
func TestCertificateExpiryCAPINodePastAYear(t *testing.T) {
	old := testNow
	testNow = testNow.AddDate(0, 3, 0)
	t.Cleanup(func() { testNow = old })
	atTestNow(t)
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/capi-node-age.yaml")))
	if len(fs) != 1 || !strings.Contains(fs[0].Title, "more than a year ago") || !strings.Contains(fs[0].Message, "renewed in place") {
		t.Errorf("findings %+v, want one saying the node is more than a year old", fs)
	}
}
