package suppress

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const objects = `
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cni
  namespace: kube-system
  labels: {team: net}
  annotations:
    kubegap.dev/ignore: "version-skew, image-pull-always"
    kubegap.dev/ignore-reason: "vendor pins Always; ticket NET-12"
    kubectl.kubernetes.io/last-applied-configuration: "{}"
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {pool: legacy}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {pool: main}}
`

func load(t *testing.T) *snapshot.Snapshot {
	t.Helper()
	s, err := snapshot.LoadFS(fstest.MapFS{"o.yaml": {Data: []byte(objects)}}, snapshot.Source{Type: snapshot.SourceFiles}, []string{"o.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var (
	ds = finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "cni"}
	n1 = finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	n2 = finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n2"}
)

func sample() *report.Report {
	r := report.New(snapshot.Source{Type: snapshot.SourceFiles}, nil)
	r.Findings = []finding.Finding{
		{Check: "image-pull-always", Severity: finding.High, Title: "pulls", Objects: []finding.ObjectRef{ds, n1}},
		{Check: "host-binary-glibc", Severity: finding.High, Title: "glibc", Objects: []finding.ObjectRef{ds}},
		{Check: "node-os-lifecycle", Severity: finding.Medium, Title: "eol legacy", Objects: []finding.ObjectRef{n1}},
		{Check: "node-os-lifecycle", Severity: finding.Medium, Title: "eol main", Objects: []finding.ObjectRef{n2}},
		// The annotated DaemonSet is not the subject here: not suppressed.
		{Check: "version-skew", Severity: finding.Low, Title: "skew", Objects: []finding.ObjectRef{n2, ds}},
	}
	r.Finish()
	return r
}

func compile(t *testing.T, rules []Rule) []Rule {
	t.Helper()
	for i := range rules {
		if err := rules[i].Compile(func(string) bool { return true }); err != nil {
			t.Fatal(err)
		}
	}
	return rules
}

func titles(fs []finding.Finding) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Title)
	}
	return strings.Join(out, ",")
}

func TestAnnotationSurvivesTrimAndSuppresses(t *testing.T) {
	s := load(t)
	m, ok := s.Meta("DaemonSet", "kube-system", "cni")
	if !ok || m.Annotations[snapshot.IgnoreAnnotation] == "" || len(m.Annotations) != 2 {
		t.Fatalf("ignore annotations not kept through trimming (or others kept): %v %v", ok, m.Annotations)
	}
	r := sample()
	Apply(r, s, nil, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	if got := titles(r.Findings); got != "glibc,eol legacy,eol main,skew" {
		t.Errorf("findings = %s", got)
	}
	if len(r.Suppressed) != 1 || r.Summary.Suppressed != 1 {
		t.Fatalf("suppressed = %+v, summary %+v", r.Suppressed, r.Summary)
	}
	sup := r.Suppressed[0]
	if sup.By != "annotation" || sup.Reason != "vendor pins Always; ticket NET-12" || *sup.Object != ds || sup.Finding.ID == "" {
		t.Errorf("suppressed = %+v", sup)
	}
	if r.Summary.High != 1 {
		t.Errorf("summary not recounted: %+v", r.Summary)
	}
}

func TestConfigRulesAndExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	rules := compile(t, []Rule{
		{Check: "node-os-lifecycle", Kind: "Node", Labels: "pool=legacy", Reason: "pool retired in Q1", Expires: "2027-03-31"},
		{Check: "host-binary-glibc", Namespace: "kube-*", Name: "c?i", Reason: "old expired one", Expires: "2026-12-01"},
	})
	r := sample()
	Apply(r, load(t), rules, now)
	if got := titles(r.Findings); got != "glibc,eol main,skew" {
		t.Errorf("findings = %s", got)
	}
	var by []string
	for _, s := range r.Suppressed {
		by = append(by, s.By+":"+s.Finding.Title+":"+s.Expires)
	}
	if got := strings.Join(by, ","); got != "annotation:pulls:,config:eol legacy:2027-03-31" {
		t.Errorf("suppressed = %s", got)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "expired on 2026-12-01") {
		t.Errorf("warnings = %q", r.Warnings)
	}
	// The day before, the same rule still suppresses.
	r = sample()
	Apply(r, load(t), rules, now.AddDate(0, 0, -1))
	if len(r.Warnings) != 0 || titles(r.Findings) != "eol main,skew" {
		t.Errorf("before expiry: findings %s, warnings %q", titles(r.Findings), r.Warnings)
	}
}

func TestRuleByIDAndCompileErrors(t *testing.T) {
	r := sample()
	id := r.Findings[len(r.Findings)-1].ID
	Apply(r, nil, compile(t, []Rule{{Check: "*", ID: id, Reason: "known"}}), time.Now())
	if titles(r.Findings) != "glibc,pulls,eol legacy,eol main" {
		t.Errorf("by ID: %s", titles(r.Findings))
	}
	// id: alone, the form a user copies from a report, suppresses the same
	// finding and names it in the expiry warning.
	r = sample()
	id = r.Findings[0].ID
	rules := compile(t, []Rule{{ID: id, Reason: "accepted", Expires: "2026-01-01"}})
	Apply(r, nil, rules, time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC))
	if len(r.Suppressed) != 1 || r.Suppressed[0].Finding.ID != id || len(r.Findings) != 4 {
		t.Errorf("id alone: suppressed %d (%v), findings %s", len(r.Suppressed), r.Suppressed, titles(r.Findings))
	}
	r = sample()
	Apply(r, nil, rules, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	if len(r.Suppressed) != 0 || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], id) {
		t.Errorf("expired id rule: suppressed %d, warnings %q", len(r.Suppressed), r.Warnings)
	}
	known := func(id string) bool { return id == "version-skew" }
	for _, bad := range []Rule{
		{Reason: "x"},
		{ID: "kg-123", Reason: "x"},
		{ID: id},
		{Check: "versoin-skew", Reason: "x"},
		{Check: "version-skew"},
		{Check: "version-skew", Reason: "x", Name: "[a"},
		{Check: "version-skew", Reason: "x", Labels: "a in (b"},
		{Check: "version-skew", Reason: "x", Expires: "next year"},
	} {
		if err := bad.Compile(known); err == nil {
			t.Errorf("%+v compiled", bad)
		}
	}
}
