// Package reportapi names the in-cluster report APIs kubegap writes and
// the resources, names and labels of its objects there. It depends on no
// other kubegap package, so that both the renderer
// (internal/report/policyreport) and the RBAC writer (internal/rbacgen)
// take them from one place.
package reportapi

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Format is one of the two report APIs.
type Format string

// The formats, as -o and publish --format name them.
const (
	// PolicyReport is wgpolicyk8s.io/v1alpha2 PolicyReport and
	// ClusterPolicyReport (kubernetes-sigs/wg-policy-prototypes).
	PolicyReport Format = "policyreport"
	// OpenReports is openreports.io/v1alpha1 Report and ClusterReport
	// (openreports/reports-api), the successor of PolicyReport.
	OpenReports Format = "openreports"
)

// Formats lists both.
func Formats() []Format { return []Format{PolicyReport, OpenReports} }

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case PolicyReport, OpenReports:
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown report format %q (want %s or %s)", s, PolicyReport, OpenReports)
}

// The group versions kubegap writes: v1alpha2 of PolicyReport, the version
// Kyverno and Policy Reporter write and read, and v1alpha1 of OpenReports,
// its only version.
var (
	WGPolicyGroupVersion    = schema.GroupVersion{Group: "wgpolicyk8s.io", Version: "v1alpha2"}
	OpenReportsGroupVersion = schema.GroupVersion{Group: "openreports.io", Version: "v1alpha1"}
)

// Resources are the API resources of a format: the namespaced report and
// the cluster report.
func Resources(f Format) (namespaced, cluster schema.GroupVersionResource) {
	if f == OpenReports {
		gv := OpenReportsGroupVersion
		return gv.WithResource("reports"), gv.WithResource("clusterreports")
	}
	gv := WGPolicyGroupVersion
	return gv.WithResource("policyreports"), gv.WithResource("clusterpolicyreports")
}

// Name is the name of every object kubegap writes: one per namespace and
// one cluster report, so the next run's objects replace these.
const Name = "kubegap"

// Source is the results' (and an OpenReports report's) source.
const Source = "kubegap"

// Labels on every object written. ManagedByLabel=kubegap is what a
// publisher selects to find its own reports among those other engines
// write.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	NameLabel      = "app.kubernetes.io/name"
)

// Selector selects kubegap's reports.
const Selector = ManagedByLabel + "=" + Source
