package certs

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The node-CSR part of certificate-expiry: a kubelet whose certificate
// expired (a cluster powered off past its renewal, a rotation that never
// happened) asks for a new one through a CertificateSigningRequest, and
// waits. Requests of the two kubelet signers that nobody approved or
// denied, well after they were made, mean kubelets without credentials.
// The rule sees the failure under way, never before: the certificates
// themselves are files on the nodes.

const (
	ruleNodeCSRs     = "pending-node-csrs"
	caseShutdownCSRs = "openshift-cluster-shutdown-expired-kubelet-certs-pending-csrs-2020-2024"

	signerKubeletClient  = "kubernetes.io/kube-apiserver-client-kubelet"
	signerKubeletServing = "kubernetes.io/kubelet-serving"
)

// pendingCSRAge is policy: a joining node's requests are approved within
// seconds to minutes by the approver of the distribution; one still
// pending after a quarter of an hour is waiting for a person.
const pendingCSRAge = 15 * time.Minute

type pendingCSR struct {
	obj              *unstructured.Unstructured
	signer, username string
	created          time.Time
	noConditions     bool
}

// decided reports whether a CSR carries an Approved, Denied or Failed
// condition: only one with none of them is still waiting.
func decided(u *unstructured.Unstructured) (decided, none bool) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["type"] {
		case "Approved", "Denied", "Failed":
			return true, false
		}
	}
	return false, len(conds) == 0
}

// nodeCSRs reports, per kubelet signer, the CSRs pending longer than
// pendingCSRAge.
func (r *expiryRun) nodeCSRs(s *snapshot.Snapshot) {
	objs := s.CustomObjects(snapshot.CertificateSigningRequests)
	bySigner := map[string][]pendingCSR{}
	for i := range objs {
		u := &objs[i]
		signer, _, _ := unstructured.NestedString(u.Object, "spec", "signerName")
		if signer != signerKubeletClient && signer != signerKubeletServing {
			continue
		}
		done, none := decided(u)
		created := u.GetCreationTimestamp().Time
		if done || created.IsZero() || r.at.Sub(created) < pendingCSRAge {
			continue
		}
		user, _, _ := unstructured.NestedString(u.Object, "spec", "username")
		bySigner[signer] = append(bySigner[signer], pendingCSR{obj: u, signer: signer, username: user, created: created, noConditions: none})
	}
	for _, signer := range []string{signerKubeletClient, signerKubeletServing} {
		if csrs := bySigner[signer]; len(csrs) > 0 {
			r.findings = append(r.findings, r.pendingCSRFinding(signer, csrs))
		}
	}
}

func (r *expiryRun) pendingCSRFinding(signer string, csrs []pendingCSR) finding.Finding {
	sort.Slice(csrs, func(i, j int) bool { return csrs[i].created.Before(csrs[j].created) })
	oldest := strings.TrimSuffix(r.at.Sub(csrs[0].created).Round(time.Minute).String(), "0s")
	users := map[string]bool{}
	for _, c := range csrs {
		users[c.username] = true
	}
	sev, what, impact := finding.High, "client", "the kubelets that made them cannot authenticate to the API server, so their nodes "+
		"stay or go NotReady and cannot rejoin until the requests are approved"
	if signer == signerKubeletServing {
		sev, what, impact = finding.Medium, "serving", "the kubelets that made them have no serving certificate the API server "+
			"trusts, so kubectl logs, exec and port-forward and metrics scraping against those nodes fail"
	}
	f := finding.Finding{
		Check:    "certificate-expiry",
		Severity: sev,
		Title: fmt.Sprintf("%d kubelet %s certificate request(s) (%s) pending for over %d minutes, the oldest for %s",
			len(csrs), what, signer, int(pendingCSRAge.Minutes()), oldest),
		Message: fmt.Sprintf("%d CertificateSigningRequests for signer %s, from %d requestor(s), have been neither approved nor "+
			"denied for more than %d minutes (a policy threshold: a joining node's requests are normally approved within "+
			"minutes). Kubelets ask for a new certificate this way when theirs has expired, for instance after a cluster was "+
			"powered off past the renewal; until the requests are approved %s. Pending requests are deleted after a day and the "+
			"kubelets keep making new ones, so the list is the current backlog, not the history.",
			len(csrs), signer, len(users), int(pendingCSRAge.Minutes()), impact),
		Remediation: "Check that each request comes from a node you own (kubectl get csr shows the requestor; a renewal is made as " +
			"system:node:NAME, a bootstrap as the bootstrap identity), then approve it with kubectl certificate approve (oc adm " +
			"certificate approve on OpenShift) as a user allowed to approve, not with the node's own or bootstrap credentials. " +
			"Watch for new requests until every node is Ready; for clusters that are powered off, add this step to the start-up " +
			"procedure.",
		Cases: []string{caseShutdownCSRs},
	}
	for i, c := range csrs {
		ref := finding.ObjectRef{APIVersion: "certificates.k8s.io/v1", Kind: "CertificateSigningRequest", Name: c.obj.GetName()}
		if i < check.MaxEvidence {
			f.Objects = append(f.Objects, ref)
			fields := []finding.Field{finding.Value("spec.signerName", c.signer), finding.Value("spec.username", c.username),
				finding.Value("metadata.creationTimestamp", c.created.UTC().Format(time.RFC3339))}
			if c.noConditions {
				fields = append(fields, finding.Absent("status.conditions"))
			}
			f.AddEvidence(finding.Quote(ref, fields...))
		}
	}
	if len(csrs) > check.MaxEvidence {
		f.Message += fmt.Sprintf(" %d more pending requests are not listed.", len(csrs)-check.MaxEvidence)
	}
	return f
}
