package policyreport

import (
	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// WGPolicyReport is a wgpolicyk8s.io/v1alpha2 PolicyReport or (without a
// namespace) ClusterPolicyReport, as far as kubegap fills it. kubegap does not
// take their Go module (sigs.k8s.io/wg-policy-prototypes, whose go.mod
// requires controller-runtime v0.6.3 and k8s.io v0.27), so this is a
// minimal copy of PolicyReport in
// kubernetes-sigs/wg-policy-prototypes policy-report/pkg/api/wgpolicyk8s.io/v1alpha2/policyreport_types.go
// at commit 25056e1f3eb5cab1e693b8c880eb693a84e099af. Its results have
// the same fields and JSON names as OpenReports' ReportResult (the
// OpenReports API is that API renamed), so that type is reused; the e2e
// test applies the output against the upstream CRD, pinned in
// test/e2e/testdata/crds.
type WGPolicyReport struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Summary openreportsv1alpha1.ReportSummary  `json:"summary,omitempty"`
	Results []openreportsv1alpha1.ReportResult `json:"results,omitempty"`
}

// DeepCopyObject makes WGPolicyReport a runtime.Object.
func (r *WGPolicyReport) DeepCopyObject() runtime.Object {
	c := &WGPolicyReport{TypeMeta: r.TypeMeta, Summary: r.Summary}
	r.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	if r.Results != nil {
		c.Results = make([]openreportsv1alpha1.ReportResult, len(r.Results))
		for i := range r.Results {
			r.Results[i].DeepCopyInto(&c.Results[i])
		}
	}
	return c
}
