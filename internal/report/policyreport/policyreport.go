// Package policyreport renders an audit report as the in-cluster report
// objects that policy engines write and Policy Reporter, RHACM, Rancher and
// Fairwinds Insights collect: wgpolicyk8s.io/v1alpha2 PolicyReport and
// ClusterPolicyReport (kubernetes-sigs/wg-policy-prototypes), or their
// successor openreports.io/v1alpha1 Report and ClusterReport
// (openreports/reports-api).
//
// One namespaced report per namespace that holds an object of a finding,
// one cluster report for findings on cluster-scoped objects only and for
// how every check went. Every object is named "kubegap" and labelled
// app.kubernetes.io/managed-by=kubegap, so a new run replaces the last one
// and a publisher can find (and delete) the reports of namespaces that no
// longer have findings.
package policyreport

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/reportapi"
)

// Format is one of the two report APIs (reportapi.Format).
type Format = reportapi.Format

// The formats and the names of kubegap's objects, from reportapi.
const (
	PolicyReport   = reportapi.PolicyReport
	OpenReports    = reportapi.OpenReports
	Name           = reportapi.Name
	Source         = reportapi.Source
	ManagedByLabel = reportapi.ManagedByLabel
	NameLabel      = reportapi.NameLabel
	Selector       = reportapi.Selector
)

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) { return reportapi.ParseFormat(s) }

// Resources are the namespaced and the cluster report resource of f.
func Resources(f Format) (namespaced, cluster schema.GroupVersionResource) {
	return reportapi.Resources(f)
}

// Options are what the mapping needs besides the report.
type Options struct {
	// FailOn: findings at or above it are "fail", below it "warn".
	// NoFail (--fail-on none) makes every finding "warn".
	FailOn finding.Severity
	NoFail bool
	// Area names the area of a check, the results' category ("" leaves it
	// out).
	Area func(checkID string) string
	// UID returns an object's UID where the input held it ("" when not).
	UID func(finding.ObjectRef) types.UID
}

// result is one result, common to both APIs (their result structs have
// the same fields and JSON names).
type result = openreportsv1alpha1.ReportResult

// Objects maps rep onto report objects of format f: the namespaced
// reports sorted by namespace, then the cluster report.
func Objects(rep *report.Report, f Format, o Options) []runtime.Object {
	byNS, cluster := results(rep, o)
	var out []runtime.Object
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		out = append(out, object(f, ns, byNS[ns], Name))
	}
	return append(out, object(f, "", cluster, ClusterReportName(rep.Source.Scope.Namespaces)))
}

// results sorts rep's results into namespaces (a finding goes to the
// report of each namespace that holds one of its objects) and the cluster
// report (findings on cluster-scoped objects alone, and how each check
// went where no finding says it).
func results(rep *report.Report, o Options) (map[string][]result, []result) {
	ts := metav1.Timestamp{Seconds: rep.GeneratedAt.Unix()}
	if rep.GeneratedAt.IsZero() {
		ts = metav1.Timestamp{}
	}
	byNS := map[string][]result{}
	var cluster []result
	// ruled: the rules of each check that findings are known to come from.
	ruled := map[string]map[string]bool{}
	rulesOf := map[string][]report.RuleResult{}
	for _, c := range rep.Checks {
		rulesOf[c.ID] = c.Rules
	}
	for _, f := range rep.Findings {
		r := findingResult(rep, f, ts, o)
		if r.Rule == "" && len(rulesOf[f.Check]) == 1 {
			r.Rule = rulesOf[f.Check][0].ID
		}
		if ruled[f.Check] == nil {
			ruled[f.Check] = map[string]bool{}
		}
		ruled[f.Check][r.Rule] = true
		var namespaces []string
		for _, obj := range f.Objects {
			if obj.Namespace != "" && !slices.Contains(namespaces, obj.Namespace) {
				namespaces = append(namespaces, obj.Namespace)
			}
		}
		if len(namespaces) == 0 {
			cluster = append(cluster, r)
			continue
		}
		for _, ns := range namespaces {
			byNS[ns] = append(byNS[ns], r)
		}
	}
	for _, c := range rep.Checks {
		cluster = append(cluster, checkResults(c, ruled[c.ID], ts, o)...)
	}
	return byNS, cluster
}

func findingResult(rep *report.Report, f finding.Finding, ts metav1.Timestamp, o Options) result {
	r := result{
		Source:      Source,
		Policy:      f.Check,
		Rule:        f.Rule,
		Severity:    openreportsv1alpha1.ResultSeverity(f.Severity.String()),
		Timestamp:   ts,
		Result:      "warn",
		Description: f.Message,
		Properties: map[string]string{
			"findingID": f.ID,
			"title":     f.Title,
		},
	}
	if !o.NoFail && f.Severity >= o.FailOn {
		r.Result = "fail"
	}
	if o.Area != nil {
		r.Category = o.Area(f.Check)
	}
	for _, obj := range f.Objects {
		ref := corev1.ObjectReference{APIVersion: obj.APIVersion, Kind: obj.Kind, Namespace: obj.Namespace, Name: obj.Name}
		if o.UID != nil {
			ref.UID = o.UID(obj)
		}
		r.Subjects = append(r.Subjects, ref)
	}
	if len(f.Cases) > 0 {
		cited := make([]string, len(f.Cases))
		for i, id := range f.Cases {
			cited[i] = id
			if rel := f.RelationTo(id); rel != "" {
				cited[i] += " (" + string(rel) + ")"
			}
		}
		r.Properties["cases"] = strings.Join(cited, ", ")
		r.Properties["caseURL"] = rep.CaseURL(f.Cases[0])
	}
	if ev := evidenceSummary(f.Evidence); ev != "" {
		r.Properties["evidence"] = ev
	}
	if f.Preflight != "" {
		r.Properties["preflight"] = f.Preflight
	}
	if f.Owner != nil {
		r.Properties["owner"] = f.Owner.Provider
	}
	return r
}

// evidenceMax is how many evidence lines a result quotes; the JSON report
// holds them all.
const evidenceMax = 3

func evidenceSummary(lines []string) string {
	if len(lines) <= evidenceMax {
		return strings.Join(lines, "; ")
	}
	return fmt.Sprintf("%s; (%d more in the kubegap report)", strings.Join(lines[:evidenceMax], "; "), len(lines)-evidenceMax)
}

// checkResults says how a check went where its findings do not: pass for
// a rule that ran on complete input and found nothing, skip (with the
// reason) for a rule that ran on incomplete input or not at all, error for
// a check that could not be evaluated. Unknown is never pass.
func checkResults(c report.CheckResult, ruled map[string]bool, ts metav1.Timestamp, o Options) []result {
	base := result{Source: Source, Policy: c.ID, Timestamp: ts}
	if o.Area != nil {
		base.Category = o.Area(c.ID)
	}
	if c.Status == report.NotEvaluated {
		r := base
		r.Result = "error"
		r.Description = "not evaluated: " + c.Reason
		if c.Reason == "" {
			r.Description = "not evaluated"
		}
		return []result{r}
	}
	rules := c.Rules
	if len(rules) == 0 && c.Status != report.Fail {
		// A report written before checks listed their rules: the check
		// stands for its one rule.
		st := report.RuleEvaluated
		if c.Status != report.Pass {
			st = report.RulePartial
		}
		rules = []report.RuleResult{{Status: st, Reason: c.Reason}}
	}
	var out []result
	for _, rr := range rules {
		r := base
		r.Rule = rr.ID
		switch {
		case rr.Status != report.RuleEvaluated:
			r.Result = "skip"
			r.Description = string(rr.Status) + ": " + rr.Reason
			if rr.Reason == "" {
				r.Description = string(rr.Status)
			}
			if len(rr.Missing) > 0 {
				r.Properties = map[string]string{"missing": strings.Join(rr.Missing, ", ")}
			}
		case ruled[rr.ID]:
			continue // its findings are its results
		case c.Status == report.Fail && ruled[""]:
			// A finding that names no rule may be this rule's: do not
			// call the rule passed.
			continue
		default:
			r.Result = "pass"
		}
		out = append(out, r)
	}
	return out
}

// ClusterReportName is the cluster report's name for an audit of scope
// (the namespaces read; none for every namespace): "kubegap" for a
// cluster-wide audit, "kubegap-NS" for one of namespace NS, so that a
// namespace audit's check results, which hold for that namespace only,
// never replace the cluster-wide ones. A cluster-wide publish deletes
// the namespace audits' cluster reports.
func ClusterReportName(scope []string) string {
	if len(scope) == 0 {
		return Name
	}
	name := Name + "-" + strings.Join(scope, "-")
	if len(name) > 253 {
		sum := sha256.Sum256([]byte(name))
		name = name[:236] + "-" + hex.EncodeToString(sum[:8])
	}
	return name
}

// object builds one report of format f: a namespaced one for namespace
// ns, the cluster report for "".
func object(f Format, ns string, results []result, name string) runtime.Object {
	meta := metav1.ObjectMeta{
		Name:      name,
		Namespace: ns,
		Labels:    map[string]string{ManagedByLabel: Source, NameLabel: Source},
	}
	sum := summarize(results)
	if f == OpenReports {
		gv := reportapi.OpenReportsGroupVersion.String()
		if ns == "" {
			return &openreportsv1alpha1.ClusterReport{
				TypeMeta:   metav1.TypeMeta{APIVersion: gv, Kind: "ClusterReport"},
				ObjectMeta: meta, Source: Source, Summary: sum, Results: results,
			}
		}
		return &openreportsv1alpha1.Report{
			TypeMeta:   metav1.TypeMeta{APIVersion: gv, Kind: "Report"},
			ObjectMeta: meta, Source: Source, Summary: sum, Results: results,
		}
	}
	kind := "PolicyReport"
	if ns == "" {
		kind = "ClusterPolicyReport"
	}
	return &WGPolicyReport{
		TypeMeta:   metav1.TypeMeta{APIVersion: reportapi.WGPolicyGroupVersion.String(), Kind: kind},
		ObjectMeta: meta,
		Summary:    sum,
		Results:    results,
	}
}

func summarize(results []result) openreportsv1alpha1.ReportSummary {
	var s openreportsv1alpha1.ReportSummary
	for _, r := range results {
		switch r.Result {
		case "pass":
			s.Pass++
		case "fail":
			s.Fail++
		case "warn":
			s.Warn++
		case "error":
			s.Error++
		case "skip":
			s.Skip++
		}
	}
	return s
}
