package certs

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// okd-project/okd 285's cluster after power-on: of its three kubelet
// client requests from node-bootstrapper, the one pending 23 minutes is
// high (the 14- and 8-minute ones are under the threshold, the approved
// one is not waiting), one serving request medium, each citing the case.
func TestCertificateExpiryPendingNodeCSRs(t *testing.T) {
	atTestNow(t)
	const file = "certificate-expiry/node-csrs-pending.yaml"
	fs, _, _ := checktest.Run(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 2 {
		t.Fatalf("findings %+v, want two (client, serving)", fs)
	}
	client, serving := fs[0], fs[1]
	if client.Severity != finding.High || len(client.Objects) != 1 || !slices.Contains(client.Cases, caseShutdownCSRs) ||
		!strings.Contains(client.Title, signerKubeletClient) || !strings.Contains(client.Title, "the oldest for 23m") || !strings.Contains(client.Message, "from 1 requestor") {
		t.Errorf("client finding %+v: want high on csr-fd8gx, the oldest 23m, citing %s", client, caseShutdownCSRs)
	}
	if !checktest.HasObject(fs, "CertificateSigningRequest", "", "csr-fd8gx") {
		t.Error("no finding names csr-fd8gx")
	}
	for _, name := range []string{"csr-fqq6s", "csr-k55sq", "csr-approved"} {
		if checktest.HasObject(fs, "CertificateSigningRequest", "", name) {
			t.Errorf("%s is not waiting but is reported", name)
		}
	}
	if serving.Severity != finding.Medium || len(serving.Objects) != 1 || !strings.Contains(serving.Title, signerKubeletServing) {
		t.Errorf("serving finding %+v: want medium on csr-serving1", serving)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 2 {
		t.Errorf("%d evidence items, want one per pending request", n)
	}
}

func TestCertificateExpiryPendingNodeCSRsClean(t *testing.T) {
	atTestNow(t)
	checktest.Quiet(t, certificateExpiryCheck(), checktest.Complete(checktest.Load(t, "certificate-expiry/node-csrs-clean.yaml")))
}
