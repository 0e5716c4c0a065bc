// Package reporttest gives renderer tests real reports: the demo cluster
// audited by every check, plus a hand-made report with the cases a demo
// does not show (not-evaluated checks, suppressions, locations, warnings).
package reporttest

import (
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// GeneratedAt is the time the test reports claim.
var GeneratedAt = time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC)

// Demo audits the demo cluster with every check.
func Demo(t testing.TB) *report.Report {
	t.Helper()
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Run(s, checks.All(), audit.Options{})
	r.GeneratedAt = GeneratedAt
	r.Tool = report.Tool{Name: "kubegap", Version: "v0.0.0-test"}
	if len(r.Findings) < 4 {
		t.Fatalf("the demo gave %d findings", len(r.Findings))
	}
	return r
}

// Edges is a small report with what the demo lacks: a not-evaluated and a
// partial check, a finding with file locations and characters that need
// escaping, a suppressed finding, a baseline and a warning.
func Edges() *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceFiles, Paths: []string{"manifests"},
		Scope: snapshot.Scope{Namespaces: []string{"payments"}}},
		[]snapshot.Coverage{{Resource: "v1/nodes", Status: snapshot.StatusRead, Count: 1},
			{Resource: "v1/pods", Status: snapshot.StatusForbidden, Message: "pods is forbidden"}})
	r.GeneratedAt = GeneratedAt
	r.Tool = report.Tool{Name: "kubegap", Version: "v0.0.0-test"}
	ds := finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "payments", Name: "agent"}
	r.Findings = []finding.Finding{{
		Check: "image-pull-always", Severity: finding.High,
		Title:   `DaemonSet payments/agent pulls "latest" | <always> & *everywhere*`,
		Message: "Line one with a | pipe.\nLine two with <b>html</b> and `code`.",
		Objects: []finding.ObjectRef{ds}, Evidence: []string{"spec.template.spec.containers[0].imagePullPolicy=Always"},
		Remediation: "Pin the image.", Cases: []string{"daemonset-pull-always-nat-ratelimit"},
		Locations: []finding.Location{{Object: ds, File: "manifests/my app/agent.yaml", Line: 12}},
		Baseline:  "new",
	}}
	r.Suppressed = []report.Suppressed{{Finding: finding.Finding{Check: "version-skew", Severity: finding.Low,
		Title: "kubelet lags", Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: "n1"}}},
		By: "config", Reason: "pool retired in Q1", Expires: "2027-03-31"}}
	r.Checks = []report.CheckResult{
		{ID: "image-pull-always", Title: "Image pulls on every start at scale", Status: report.Fail, Findings: 1},
		{ID: "version-skew", Title: "Kubelets outside the supported version skew", Status: report.Pass},
		{ID: "pod-sandbox-failures", Title: "Pods stuck", Status: report.NotEvaluated, Reason: "v1/pods forbidden"},
		{ID: "pdb-blocks-drain", Title: "PDBs that block drain", Status: report.Partial, Reason: "only namespace payments was read"},
	}
	r.Warnings = []string{"suppression of node-os-lifecycle (old) expired on 2026-11-01: its findings are reported again"}
	r.Finish()
	r.Baseline = &report.Baseline{File: "prev.json", New: 1, Resolved: []finding.Finding{}}
	return r
}

// Rules describes the registered checks as renderers take them.
func Rules() []check.Check { return checks.All() }
