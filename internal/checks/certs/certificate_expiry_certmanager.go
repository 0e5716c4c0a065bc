package certs

// certificate-expiry: cert-manager Certificates and their Ready conditions.

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// caseACMERateLimit is the case of renewals refused by ACME rate limits:
// the cert-manager rule sees it once the renewal time has passed unrenewed.
const caseACMERateLimit = "cert-manager-acme-rate-limit-renewal-loops-2020-2026"

func (r *expiryRun) certManager(s *snapshot.Snapshot) {
	const rule = "cert-manager-renewal"
	objs := s.CustomObjects(snapshot.CertManagerCertificates)
	for i := range objs {
		u := &objs[i]
		na, found, _ := unstructured.NestedString(u.Object, "status", "notAfter")
		if !found || na == "" {
			continue // not issued yet: another problem, not an end date
		}
		notAfter, err := time.Parse(time.RFC3339, na)
		if err != nil {
			r.ctx.Incomplete(rule, "Certificate %s/%s: status.notAfter %q is not a time", u.GetNamespace(), u.GetName(), na)
			continue
		}
		left := daysLeft(notAfter, r.at)
		sev, ok := r.severity(left, finding.Critical)
		if !ok {
			continue
		}
		fields := []finding.Field{finding.Value("status.notAfter", na)}
		var ev []string
		if rt, found, _ := unstructured.NestedString(u.Object, "status", "renewalTime"); found && rt != "" {
			renewal, err := time.Parse(time.RFC3339, rt)
			if err == nil && renewal.After(r.at) && left >= 0 {
				continue // cert-manager has not tried yet: its renewal is due later
			}
			fields = append(fields, finding.Value("status.renewalTime", rt))
			ev = append(ev, fmt.Sprintf("status.renewalTime %s has passed", rt))
		} else {
			fields = append(fields, finding.Absent("status.renewalTime"))
		}
		fields = append(fields, readyFields(u)...)
		c := certInfo{NotAfter: notAfter}
		f := finding.Finding{
			Check:    "certificate-expiry",
			Severity: sev,
			Title:    fmt.Sprintf("cert-manager Certificate %s/%s %s and was not renewed", u.GetNamespace(), u.GetName(), r.horizonText(left)),
			Message: fmt.Sprintf("The certificate %s, and its renewal time has passed: cert-manager tried to renew it "+
				"and failed, or is not running.", r.when(c)),
			Objects: []finding.ObjectRef{check.Ref("cert-manager.io/v1", "Certificate", u)},
			Remediation: "Find why renewal fails (kubectl describe certificate, the CertificateRequest and the issuer's " +
				"status; cert-manager's logs) and fix the issuer; cmctl renew forces a new attempt.",
			Cases: []string{"linkerd-trust-anchor-one-year-expiry-2020", caseACMERateLimit},
		}
		f.AddEvidence(finding.Quote(check.Ref("cert-manager.io/v1", "Certificate", u), fields...))
		f.Evidence = append(f.Evidence, ev...)
		r.findings = append(r.findings, f)
	}
}

// readyFields quotes the Ready condition of a cert-manager Certificate
// when it is not True: its status, reason and message, each as written or
// absent (the old text printed a missing reason as "<nil>").
func readyFields(u *unstructured.Unstructured) []finding.Field {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != "Ready" || m["status"] == "True" {
			continue
		}
		var out []finding.Field
		for _, key := range []string{"status", "reason", "message"} {
			path := "status.conditions[type=Ready]." + key
			if v, ok := m[key].(string); ok && v != "" {
				out = append(out, finding.Value(path, v))
			} else {
				out = append(out, finding.Absent(path))
			}
		}
		return out
	}
	return nil
}
