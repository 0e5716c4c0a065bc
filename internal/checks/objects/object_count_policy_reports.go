package objects

import (
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	rulePolicyReports  = "policy-reports"
	caseKyvernoReports = "kyverno-admission-reports-fill-etcd-2023-2026"
)

// kyvernoReports are the intermediary report kinds Kyverno writes for its
// reports controller to consume into PolicyReports; a CRD the installed
// Kyverno does not have is not served and counts none.
var kyvernoReports = []snapshot.Resource{snapshot.KyvernoAdmissionReports, snapshot.KyvernoEphemeralReports}

// policyReports reports each kind of Kyverno intermediary report whose
// count has passed the thresholds: these pile up when Kyverno creates them
// faster than its reports controller aggregates and deletes them.
func policyReports(ctx *check.Context) []finding.Finding {
	var out []finding.Finding
	for _, r := range kyvernoReports {
		crd := finding.ObjectRef{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: r.Resource + "." + r.Group}
		if f, ok := counted(ctx, r, crd, policyReportsWarn, policyReportsHigh, "Kyverno "+r.Kind+"s",
			"Kyverno writes these intermediary reports at admission and in background scans for its reports "+
				"controller to consume into PolicyReports; when they are written faster than they are consumed (or "+
				"nothing consumes them) they stay in etcd, and on the cited clusters they filled etcd's quota, after "+
				"which every write fails, or took the API server down.",
			"Find why the reports controller is behind (its logs, its client QPS and burst settings, whether the "+
				"background scan that consumes background reports is enabled), delete the stale reports, and where "+
				"admission reports are not needed turn them off (--admissionReports=false, the workaround of the Kyverno 1.9 report).",
			[]string{caseKyvernoReports}); ok {
			out = append(out, f)
		}
	}
	return out
}
