package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

func testReport() *report.Report {
	pod := func(ns, name string) []finding.ObjectRef {
		return []finding.ObjectRef{{APIVersion: "v1", Kind: "Pod", Namespace: ns, Name: name}}
	}
	node := []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: "n1"}}
	return &report.Report{
		Checks: []report.CheckResult{
			{ID: "crashloop-pull", Status: report.Fail},
			{ID: "version-skew", Status: report.Partial},
		},
		Findings: []finding.Finding{
			{ID: "a", Check: "crashloop-pull", Severity: finding.High, Objects: pod("apps", "web-1")},
			{ID: "b", Check: "crashloop-pull", Severity: finding.High, Objects: pod("apps", "web-2")},
			{ID: "c", Check: "crashloop-pull", Severity: finding.Medium, Objects: pod("db", "pg-0")},
			{ID: "d", Check: "upgrade-preflight", Severity: finding.High, Objects: node, Preflight: finding.PreflightBefore},
		},
	}
}

// TestFindingsAreCountedNotListed: one series per (check, severity,
// namespace, preflight) with the count as its value, and no finding ID or
// object name anywhere in the exposition.
func TestFindingsAreCountedNotListed(t *testing.T) {
	s := New(Build{Version: "v1.2.3", Revision: "abc"})
	finished := time.Unix(1700000000, 0)
	s.Succeeded(Audit{Report: testReport(), Duration: 1500 * time.Millisecond, Finished: finished})
	want := `
# HELP kubegap_findings Findings of the last successful audit, by check, severity, namespace of the finding's first object (empty for a cluster-scoped one) and preflight phase (before or during an upgrade to --target-version; empty for the cluster as it is).
# TYPE kubegap_findings gauge
kubegap_findings{check="crashloop-pull",namespace="apps",preflight="",severity="high"} 2
kubegap_findings{check="crashloop-pull",namespace="db",preflight="",severity="medium"} 1
kubegap_findings{check="upgrade-preflight",namespace="",preflight="before",severity="high"} 1
# HELP kubegap_audit_duration_seconds How long the last successful audit took, reading the cluster included.
# TYPE kubegap_audit_duration_seconds gauge
kubegap_audit_duration_seconds 1.5
# HELP kubegap_audit_last_success_timestamp_seconds When the last successful audit finished, in seconds since the Unix epoch.
# TYPE kubegap_audit_last_success_timestamp_seconds gauge
kubegap_audit_last_success_timestamp_seconds 1.7e+09
# HELP kubegap_audit_errors_total Audits that failed since the process started; the other kubegap metrics keep describing the last successful audit.
# TYPE kubegap_audit_errors_total counter
kubegap_audit_errors_total 0
`
	if err := testutil.GatherAndCompare(s.Registry(), strings.NewReader(want), Findings, AuditDuration, AuditLastSuccess, AuditErrors); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := s.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"web-1", "pg-0", "n1"} {
		if strings.Contains(text.String(), name) {
			t.Errorf("the exposition names object %s:\n%s", name, text.String())
		}
	}
	if !strings.Contains(text.String(), `kubegap_build_info{goversion="`) || !strings.Contains(text.String(), `revision="abc",version="v1.2.3"} 1`) {
		t.Errorf("no build info:\n%s", text.String())
	}
}

// TestCheckStatusHasEveryStatus: each check has a series per status, 1 for
// its own, so a status change is a value change.
func TestCheckStatusHasEveryStatus(t *testing.T) {
	s := New(Build{Version: "v1"})
	s.Succeeded(Audit{Report: testReport(), Finished: time.Unix(1, 0)})
	if n := testutil.CollectAndCount((*reportCollector)(s), CheckStatus); n != 8 {
		t.Errorf("%d check_status series, want 2 checks x 4 statuses", n)
	}
	want := `
# HELP kubegap_check_status 1 for the status each check had in the last successful audit (fail, pass, partial, not-evaluated), 0 for the other statuses.
# TYPE kubegap_check_status gauge
kubegap_check_status{check="crashloop-pull",status="fail"} 1
kubegap_check_status{check="crashloop-pull",status="not-evaluated"} 0
kubegap_check_status{check="crashloop-pull",status="partial"} 0
kubegap_check_status{check="crashloop-pull",status="pass"} 0
kubegap_check_status{check="version-skew",status="fail"} 0
kubegap_check_status{check="version-skew",status="not-evaluated"} 0
kubegap_check_status{check="version-skew",status="partial"} 1
kubegap_check_status{check="version-skew",status="pass"} 0
`
	if err := testutil.GatherAndCompare(s.Registry(), strings.NewReader(want), CheckStatus); err != nil {
		t.Fatal(err)
	}
}

// TestFailedAuditKeepsTheLastGoodMetrics: a failure counts, and the
// findings and the last-success time stay those of the good audit.
func TestFailedAuditKeepsTheLastGoodMetrics(t *testing.T) {
	s := New(Build{Version: "v1"})
	if n := testutil.CollectAndCount(s.Registry(), Findings, AuditLastSuccess); n != 0 {
		t.Fatalf("%d series before any audit, want none", n)
	}
	s.Failed()
	s.Succeeded(Audit{Report: testReport(), Finished: time.Unix(1000, 0)})
	s.Failed()
	s.Failed()
	if v := testutil.ToFloat64(s.errors); v != 3 {
		t.Errorf("errors_total %v, want 3", v)
	}
	if n := testutil.CollectAndCount(s.Registry(), Findings); n != 3 {
		t.Errorf("%d findings series after failures, want the good audit's 3", n)
	}
	if got := s.Last().Finished; !got.Equal(time.Unix(1000, 0)) {
		t.Errorf("last success %v, want the good audit's", got)
	}
}

// TestNamesAreExported: Names lists exactly what a Set exports once an
// audit has succeeded (the dashboard test relies on it).
func TestNamesAreExported(t *testing.T) {
	s := New(Build{Version: "v1"})
	s.Succeeded(Audit{Report: testReport(), Finished: time.Unix(1, 0)})
	families, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range families {
		got[mf.GetName()] = true
	}
	for _, n := range Names() {
		if !got[n] {
			t.Errorf("%s is in Names but not exported", n)
		}
		delete(got, n)
	}
	for n := range got {
		t.Errorf("%s is exported but not in Names", n)
	}
}
