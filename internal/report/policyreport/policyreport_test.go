package policyreport

import (
	"bytes"
	"strings"
	"testing"
	"time"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/reportapi"
)

func sampleReport() *report.Report {
	return &report.Report{
		CaseBaseURL: "https://kubegap.dev/cases/",
		GeneratedAt: time.Date(2026, 12, 1, 6, 17, 0, 0, time.UTC),
		Checks: []report.CheckResult{
			{ID: "pdb-blocks-drain", Status: report.Fail, Findings: 2, Rules: []report.RuleResult{{ID: "zero-disruptions", Status: report.RuleEvaluated}}},
			{ID: "version-skew", Status: report.Fail, Findings: 1, Rules: []report.RuleResult{
				{ID: "kubelet-skew", Status: report.RuleEvaluated},
				{ID: "proxy-skew", Status: report.RuleEvaluated},
				{ID: "cloud-skew", Status: report.RulePartial, Reason: "no cloud-controller-manager read", Missing: []string{"apps/v1/daemonsets"}},
			}},
			{ID: "coredns-capacity", Status: report.Pass, Rules: []report.RuleResult{{ID: "replicas", Status: report.RuleEvaluated}, {ID: "autoscaler", Status: report.RuleEvaluated}}},
			{ID: "hpa-metric-source", Status: report.NotEvaluated, Reason: "horizontalpodautoscalers: forbidden"},
		},
		Findings: []finding.Finding{
			{ID: "kg-1", Check: "pdb-blocks-drain", Severity: finding.High, Title: "PDB blocks", Message: "PDB payments/api allows 0 disruptions",
				Objects:  []finding.ObjectRef{{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "payments", Name: "api"}, {APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "shop", Name: "web"}},
				Evidence: []string{"e1", "e2", "e3", "e4", "e5"}, Cases: []string{"case-a", "case-b"},
				CaseLinks: []finding.CaseLink{{ID: "case-a", Relation: finding.Prevents}, {ID: "case-b", Relation: finding.Related}}},
			{ID: "kg-2", Check: "pdb-blocks-drain", Severity: finding.Medium, Title: "PDB blocks too", Message: "m2", Preflight: finding.PreflightBefore,
				Objects: []finding.ObjectRef{{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "shop", Name: "db"}}, Cases: []string{"case-a"}},
			{ID: "kg-3", Check: "version-skew", Rule: "kubelet-skew", Severity: finding.Critical, Title: "skew", Message: "m3",
				Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: "n1"}}, Evidence: []string{"Node/n1 kubeletVersion=v1.30.0"}, Cases: []string{"case-c"}},
		},
	}
}

func area(id string) string {
	return map[string]string{"pdb-blocks-drain": "availability", "version-skew": "versions"}[id]
}

func TestObjectsMapping(t *testing.T) {
	uids := map[string]types.UID{"api": "uid-api"}
	objs := Objects(sampleReport(), OpenReports, Options{FailOn: finding.High, Area: area,
		UID: func(o finding.ObjectRef) types.UID { return uids[o.Name] }})
	if len(objs) != 3 {
		t.Fatalf("got %d objects, want payments, shop and the cluster report", len(objs))
	}
	payments, shop := objs[0].(*openreportsv1alpha1.Report), objs[1].(*openreportsv1alpha1.Report)
	cluster := objs[2].(*openreportsv1alpha1.ClusterReport)
	if payments.Namespace != "payments" || shop.Namespace != "shop" || cluster.Namespace != "" {
		t.Fatalf("namespaces: %q %q %q", payments.Namespace, shop.Namespace, cluster.Namespace)
	}
	for _, m := range []struct {
		name, source string
		labels       map[string]string
	}{
		{payments.Name, payments.Source, payments.Labels}, {shop.Name, shop.Source, shop.Labels}, {cluster.Name, cluster.Source, cluster.Labels}} {
		if m.name != Name || m.source != Source || m.labels[ManagedByLabel] != "kubegap" {
			t.Errorf("object %q source %q labels %v: want name and source kubegap, managed-by kubegap", m.name, m.source, m.labels)
		}
	}
	// kg-1 has objects in two namespaces: it is in both reports.
	if len(payments.Results) != 1 || payments.Results[0].Properties["findingID"] != "kg-1" {
		t.Fatalf("payments results: %+v", payments.Results)
	}
	r := payments.Results[0]
	if r.Result != "fail" || r.Severity != "high" || r.Policy != "pdb-blocks-drain" || r.Rule != "zero-disruptions" || r.Category != "availability" || r.Source != "kubegap" {
		t.Errorf("kg-1 result: %+v", r)
	}
	if r.Subjects[0].UID != "uid-api" || r.Subjects[1].UID != "" || r.Subjects[1].Namespace != "shop" {
		t.Errorf("kg-1 resources: %+v", r.Subjects)
	}
	if got := r.Properties["cases"]; got != "case-a (prevents), case-b (related)" {
		t.Errorf("cases = %q", got)
	}
	if got := r.Properties["caseURL"]; got != "https://kubegap.dev/cases/case-a" {
		t.Errorf("caseURL = %q", got)
	}
	if got := r.Properties["evidence"]; got != "e1; e2; e3; (2 more in the kubegap report)" {
		t.Errorf("evidence = %q", got)
	}
	if r.Timestamp.Seconds != sampleReport().GeneratedAt.Unix() {
		t.Errorf("timestamp %v", r.Timestamp)
	}
	if len(shop.Results) != 2 {
		t.Fatalf("shop results: %+v", shop.Results)
	}
	// Medium is below --fail-on high: warn.
	if w := shop.Results[1]; w.Properties["findingID"] != "kg-2" || w.Result != "warn" || w.Properties["preflight"] != "before" {
		t.Errorf("kg-2 result: %+v", w)
	}
	if shop.Summary != (openreportsv1alpha1.ReportSummary{Fail: 1, Warn: 1}) {
		t.Errorf("shop summary %+v", shop.Summary)
	}

	got := map[string]string{}
	for _, r := range cluster.Results {
		got[r.Policy+"/"+r.Rule] = string(r.Result)
	}
	want := map[string]string{
		"version-skew/kubelet-skew":   "fail", // the finding on a Node
		"version-skew/proxy-skew":     "pass", // evaluated, no finding
		"version-skew/cloud-skew":     "skip", // partial: unknown is never pass
		"coredns-capacity/replicas":   "pass",
		"coredns-capacity/autoscaler": "pass",
		"hpa-metric-source/":          "error", // not evaluated
	}
	if len(got) != len(want) {
		t.Errorf("cluster results %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("cluster result %s = %q, want %q", k, got[k], v)
		}
	}
	// pdb-blocks-drain's one rule has findings: no pass for it anywhere.
	if _, ok := got["pdb-blocks-drain/zero-disruptions"]; ok {
		t.Error("a rule with findings is also reported as passed")
	}
	for _, r := range cluster.Results {
		switch r.Policy + "/" + r.Rule {
		case "version-skew/cloud-skew":
			if !strings.Contains(r.Description, "no cloud-controller-manager read") || r.Properties["missing"] != "apps/v1/daemonsets" {
				t.Errorf("skip result: %+v", r)
			}
		case "hpa-metric-source/":
			if !strings.Contains(r.Description, "forbidden") {
				t.Errorf("error result: %+v", r)
			}
		}
	}
	if cluster.Summary != (openreportsv1alpha1.ReportSummary{Fail: 1, Pass: 3, Skip: 1, Error: 1}) {
		t.Errorf("cluster summary %+v", cluster.Summary)
	}
}

func TestNoFailMakesEveryFindingWarn(t *testing.T) {
	for _, obj := range Objects(sampleReport(), OpenReports, Options{NoFail: true}) {
		var results []openreportsv1alpha1.ReportResult
		switch o := obj.(type) {
		case *openreportsv1alpha1.Report:
			results = o.Results
		case *openreportsv1alpha1.ClusterReport:
			results = o.Results
		}
		for _, r := range results {
			if r.Result == "fail" {
				t.Errorf("--fail-on none: %s is fail", r.Properties["findingID"])
			}
		}
	}
}

// A check whose findings name no rule and which has several rules: none
// of its evaluated rules may be called passed, since any could be the
// findings'.
func TestUnattributedFindingsPassNoRule(t *testing.T) {
	rep := &report.Report{
		Checks:   []report.CheckResult{{ID: "c", Status: report.Fail, Rules: []report.RuleResult{{ID: "a", Status: report.RuleEvaluated}, {ID: "b", Status: report.RuleEvaluated}}}},
		Findings: []finding.Finding{{ID: "kg-x", Check: "c", Severity: finding.High, Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: "n"}}}},
	}
	objs := Objects(rep, OpenReports, Options{FailOn: finding.High})
	cluster := objs[len(objs)-1].(*openreportsv1alpha1.ClusterReport)
	for _, r := range cluster.Results {
		if r.Result == "pass" {
			t.Errorf("rule %s passed beside a finding that names no rule", r.Rule)
		}
	}
	if cluster.Summary.Fail != 1 || len(cluster.Results) != 1 {
		t.Errorf("results %+v", cluster.Results)
	}
}

func TestWritePolicyReportKinds(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sampleReport(), PolicyReport, Options{FailOn: finding.High}); err != nil {
		t.Fatal(err)
	}
	docs := strings.Split(buf.String(), "\n---\n")
	if len(docs) != 3 {
		t.Fatalf("%d documents, want 3:\n%s", len(docs), buf.String())
	}
	wantKinds := []string{"PolicyReport", "PolicyReport", "ClusterPolicyReport"}
	for i, d := range docs {
		var m map[string]any
		if err := yaml.Unmarshal([]byte(d), &m); err != nil {
			t.Fatal(err)
		}
		if m["apiVersion"] != "wgpolicyk8s.io/v1alpha2" || m["kind"] != wantKinds[i] {
			t.Errorf("document %d: %v %v", i, m["apiVersion"], m["kind"])
		}
		if _, ok := m["source"]; ok {
			t.Errorf("document %d: a top-level source, which v1alpha2 does not define", i)
		}
		meta := m["metadata"].(map[string]any)
		if _, ok := meta["creationTimestamp"]; ok {
			t.Errorf("document %d carries creationTimestamp", i)
		}
	}
}

// The group version kubegap names is the upstream module's.
func TestOpenReportsGroupVersion(t *testing.T) {
	if reportapi.OpenReportsGroupVersion != openreportsv1alpha1.SchemeGroupVersion {
		t.Errorf("reportapi names %v, the openreports module %v", reportapi.OpenReportsGroupVersion, openreportsv1alpha1.SchemeGroupVersion)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"policyreport", "openreports"} {
		if f, err := ParseFormat(s); err != nil || string(f) != s {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if _, err := ParseFormat("PolicyReports"); err == nil {
		t.Error("ParseFormat accepted a wrong name")
	}
}

// A namespace audit's cluster report has a name of its own, so it never
// replaces the cluster-wide one.
func TestClusterReportNameByScope(t *testing.T) {
	rep := sampleReport()
	rep.Source.Scope.Namespaces = []string{"shop"}
	objs := Objects(rep, PolicyReport, Options{})
	cluster := objs[len(objs)-1].(*WGPolicyReport)
	if cluster.Kind != "ClusterPolicyReport" || cluster.Name != "kubegap-shop" {
		t.Errorf("a namespace audit's cluster report: %s %s", cluster.Kind, cluster.Name)
	}
	for _, o := range objs[:len(objs)-1] {
		if n := o.(*WGPolicyReport).Name; n != Name {
			t.Errorf("namespaced report named %q", n)
		}
	}
	long := ClusterReportName([]string{strings.Repeat("a", 63), strings.Repeat("b", 63), strings.Repeat("c", 63), strings.Repeat("d", 63)})
	if len(long) > 253 || !strings.HasPrefix(long, "kubegap-aaa") {
		t.Errorf("a long scope's name: %d characters, %q", len(long), long)
	}
	if ClusterReportName(nil) != "kubegap" {
		t.Error("a cluster-wide audit's cluster report is not kubegap")
	}
}
