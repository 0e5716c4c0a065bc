package audit

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func fakeCheck(id string, reads []check.Input, run func(*check.Context) ([]finding.Finding, error)) check.Check {
	return check.Check{ID: id, Title: id, Severity: finding.High, Reads: reads, Cases: check.Prevents("c"), Run: run}
}

func oneFinding(sev finding.Severity) func(*check.Context) ([]finding.Finding, error) {
	return func(*check.Context) ([]finding.Finding, error) {
		return []finding.Finding{{Severity: sev, Title: "gap", Objects: []finding.ObjectRef{{Kind: "Node", Name: "n"}}}}, nil
	}
}

func TestSelect(t *testing.T) {
	all := []check.Check{fakeCheck("a", nil, nil), fakeCheck("b", nil, nil), fakeCheck("c", nil, nil),
		fakeCheck("host-binary-glibc", nil, nil), fakeCheck("host-images", nil, nil), fakeCheck("version-skew", nil, nil)}
	ids := func(cs []check.Check) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.ID)
		}
		return strings.Join(s, ",")
	}
	for _, tc := range []struct {
		enable, skip []string
		want, err    string
	}{
		{nil, nil, "a,b,c,host-binary-glibc,host-images,version-skew", ""},
		{[]string{"c", "a"}, nil, "a,c", ""},
		{nil, []string{"b", "host", "version-skew"}, "", `check "host" is ambiguous: it starts host-binary-glibc, host-images`},
		{nil, []string{"b", "host-b", "version-skew"}, "a,c,host-images", ""},
		{[]string{"a"}, []string{"a"}, "", "no check left"},
		// Any case, and a unique prefix, as checks show takes them.
		{[]string{"HOST-BINARY-GLIBC", "Version"}, nil, "host-binary-glibc,version-skew", ""},
		{[]string{"host-binary"}, nil, "host-binary-glibc", ""},
		// An unknown ID names the nearest, not every ID.
		{[]string{"verison-skew"}, nil, "", `unknown check "verison-skew"; did you mean version-skew?`},
		{nil, []string{"zzzzzzzz"}, "", `unknown check "zzzzzzzz"; no check ID is near it (kubegap checks list lists them)`},
	} {
		got, err := Select(all, tc.enable, tc.skip)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Select(%v, %v) err = %v, want %q", tc.enable, tc.skip, err, tc.err)
			}
			continue
		}
		if err != nil || ids(got) != tc.want {
			t.Errorf("Select(%v, %v) = %s, %v; want %s", tc.enable, tc.skip, ids(got), err, tc.want)
		}
	}
}

func TestResourcesIsTheUnionInKnownOrder(t *testing.T) {
	cs := []check.Check{
		fakeCheck("a", check.Needs(snapshot.Pods, snapshot.Nodes), nil),
		fakeCheck("b", []check.Input{check.Optional(snapshot.NetworkAttachmentDefinitions), {Resource: snapshot.Nodes}}, nil),
	}
	got := Resources(cs)
	want := []snapshot.Resource{snapshot.Nodes, snapshot.Pods, snapshot.NetworkAttachmentDefinitions}
	if len(got) != len(want) {
		t.Fatalf("Resources = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Resources[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// TestRunStatuses: pass, fail, partial for a forbidden input beside a
// complete one, not-evaluated when nothing could be read, an optional input
// that is not served, a check's own not-evaluated, an error and a panic —
// and the audit goes on after each.
func TestRunStatuses(t *testing.T) {
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	s.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	s.SetComplete(snapshot.Nodes, nil)
	s.SetCoverage(snapshot.Pods, snapshot.StatusForbidden, `pods is forbidden: User "x" cannot list`)
	s.SetCoverage(snapshot.NetworkAttachmentDefinitions, snapshot.StatusNotServed, "")
	s.SetComplete(snapshot.NetworkAttachmentDefinitions, nil)
	s.Finish()
	ran := map[string]bool{}
	mark := func(id string, f func(*check.Context) ([]finding.Finding, error)) func(*check.Context) ([]finding.Finding, error) {
		return func(c *check.Context) ([]finding.Finding, error) { ran[id] = true; return f(c) }
	}
	none := func(*check.Context) ([]finding.Finding, error) { return nil, nil }
	cs := []check.Check{
		fakeCheck("pass", check.Needs(snapshot.Nodes), mark("pass", none)),
		fakeCheck("fail", check.Needs(snapshot.Nodes), mark("fail", oneFinding(finding.Medium))),
		fakeCheck("forbidden", check.Needs(snapshot.Nodes, snapshot.Pods), mark("forbidden", none)),
		fakeCheck("forbidden-only", check.Needs(snapshot.Pods), mark("forbidden-only", none)),
		fakeCheck("optional", []check.Input{{Resource: snapshot.Nodes}, check.Optional(snapshot.NetworkAttachmentDefinitions)}, mark("optional", none)),
		fakeCheck("unread", check.Needs(snapshot.Events), mark("unread", none)),
		fakeCheck("cannot", check.Needs(snapshot.Nodes), mark("cannot", func(*check.Context) ([]finding.Finding, error) {
			return nil, check.NotEvaluated("no node reports its OS")
		})),
		fakeCheck("errs", check.Needs(snapshot.Nodes), mark("errs", func(*check.Context) ([]finding.Finding, error) {
			return nil, errors.New("boom")
		})),
		fakeCheck("panics", check.Needs(snapshot.Nodes), mark("panics", func(*check.Context) ([]finding.Finding, error) {
			panic("a bug in the check")
		})),
	}
	r := Run(s, cs, Options{})
	want := map[string]struct {
		status report.Status
		reason string
	}{
		"pass":           {report.Pass, ""},
		"fail":           {report.Fail, ""},
		"forbidden":      {report.Partial, "forbidden partial: forbidden (pods is forbidden"},
		"forbidden-only": {report.NotEvaluated, "forbidden-only skipped: forbidden (pods is forbidden: User \"x\" cannot list): pods"},
		"optional":       {report.Pass, ""},
		"unread":         {report.NotEvaluated, "unread skipped: not read: events"},
		"cannot":         {report.NotEvaluated, "no node reports its OS"},
		"errs":           {report.NotEvaluated, "check failed: boom"},
		"panics":         {report.NotEvaluated, "check failed: panic"},
	}
	for _, c := range r.Checks {
		w := want[c.ID]
		if c.Status != w.status || !strings.HasPrefix(c.Reason, w.reason) {
			t.Errorf("%s: %s %q, want %s %q", c.ID, c.Status, c.Reason, w.status, w.reason)
		}
	}
	// Every check runs on what is present: a missing input never hides
	// what the present objects prove.
	for _, c := range cs {
		if !ran[c.ID] {
			t.Errorf("%s did not run", c.ID)
		}
	}
	if len(r.Findings) != 1 || r.Findings[0].Check != "fail" || r.Summary.Medium != 1 {
		t.Errorf("findings = %+v, summary = %+v", r.Findings, r.Summary)
	}
	if !r.AtOrAbove(finding.Medium) || r.AtOrAbove(finding.High) {
		t.Error("AtOrAbove disagrees with the findings")
	}
}

// TestRuleVerdicts: per-rule status from input completeness (files, a
// namespace scope) and from what the check says while it runs; a finding
// is reported even when another rule could not run.
func TestRuleVerdicts(t *testing.T) {
	files := snapshot.New(snapshot.Source{Type: snapshot.SourceFiles})
	files.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	files.SetCoverage(snapshot.DaemonSets, snapshot.StatusNotInInput, "")
	files.Nodes = []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}
	files.Finish()
	scoped := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster, Scope: snapshot.Scope{Namespaces: []string{"payments"}}})
	scoped.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	scoped.SetComplete(snapshot.Nodes, nil)
	scoped.SetCoverage(snapshot.DaemonSets, snapshot.StatusRead, "")
	scoped.SetComplete(snapshot.DaemonSets, []string{"payments"})
	scoped.Finish()
	complete := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	for _, r := range []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets} {
		complete.SetCoverage(r, snapshot.StatusRead, "")
		complete.SetComplete(r, nil)
	}
	complete.Finish()
	twoRules := func(run func(*check.Context) ([]finding.Finding, error)) check.Check {
		c := fakeCheck("two", check.Needs(snapshot.Nodes, snapshot.DaemonSets), run)
		c.Rules = []check.Rule{
			{ID: "nodes-only", Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: "daemonsets", Needs: []snapshot.Resource{snapshot.DaemonSets}},
		}
		return c
	}
	none := func(*check.Context) ([]finding.Finding, error) { return nil, nil }
	for _, tc := range []struct {
		name   string
		snap   *snapshot.Snapshot
		run    func(*check.Context) ([]finding.Finding, error)
		status report.Status
		rules  string
	}{
		{"complete", complete, none, report.Pass, "nodes-only=evaluated daemonsets=evaluated"},
		{"files", files, none, report.Partial, "nodes-only=partial daemonsets=skipped"},
		{"files finding", files, oneFinding(finding.High), report.Fail, "nodes-only=partial daemonsets=skipped"},
		{"namespace scope", scoped, none, report.Partial, "nodes-only=evaluated daemonsets=partial"},
		{"check skips a rule", complete, func(c *check.Context) ([]finding.Finding, error) {
			c.Skip("daemonsets", "no server version")
			return nil, nil
		}, report.Partial, "nodes-only=evaluated daemonsets=skipped"},
		{"check cannot judge", complete, func(c *check.Context) ([]finding.Finding, error) {
			c.Incomplete("nodes-only", "2 nodes run an OS kubegap does not know")
			return nil, nil
		}, report.Partial, "nodes-only=partial daemonsets=evaluated"},
		{"check skips every rule", complete, func(c *check.Context) ([]finding.Finding, error) {
			c.Skip("daemonsets", "x")
			c.Skip("nodes-only", "y")
			return nil, nil
		}, report.NotEvaluated, "nodes-only=skipped daemonsets=skipped"},
	} {
		r := Run(tc.snap, []check.Check{twoRules(tc.run)}, Options{})
		res := r.Checks[0]
		var rules []string
		for _, rr := range res.Rules {
			rules = append(rules, rr.ID+"="+string(rr.Status))
			if rr.Status != report.RuleEvaluated && rr.Reason == "" {
				t.Errorf("%s: rule %s is %s without a reason", tc.name, rr.ID, rr.Status)
			}
		}
		if res.Status != tc.status || strings.Join(rules, " ") != tc.rules {
			t.Errorf("%s: %s [%s], want %s [%s]", tc.name, res.Status, strings.Join(rules, " "), tc.status, tc.rules)
		}
		if res.Status != report.Pass && res.Status != report.Fail && res.Reason == "" {
			t.Errorf("%s: %s without a reason", tc.name, res.Status)
		}
	}
}

// TestCheckScope: a namespace scope naming a namespace that a complete
// Namespace read does not hold is refused with the ones that exist; with
// Namespaces not read completely it stands, and the report says once that
// it could not be confirmed.
func TestCheckScope(t *testing.T) {
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restrict([]string{"nosuchns"}); err != nil {
		t.Fatal(err)
	}
	err = CheckScope(s)
	if err == nil || !strings.Contains(err.Error(), `namespace "nosuchns" does not exist`) || !strings.Contains(err.Error(), "payments") {
		t.Errorf("CheckScope = %v, want the namespaces that exist", err)
	}
	if ScopeNote(s) != "" {
		t.Error("a complete Namespace read leaves no note")
	}
	ok, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := ok.Restrict([]string{"payments"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckScope(ok); err != nil {
		t.Errorf("payments exists: %v", err)
	}
	ok.Drop(snapshot.Namespaces)
	if err := CheckScope(ok); err != nil {
		t.Errorf("Namespaces not read: %v, want the scope taken as given", err)
	}
	r := Run(ok, checks.All()[:1], Options{})
	n := 0
	for _, w := range r.Warnings {
		if strings.Contains(w, "namespace payments could not be confirmed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d notes that the namespace could not be confirmed: %v", n, r.Warnings)
	}
}

// TestRuleCategories: a rule waiting on an opt-in source or on knowledge
// kubegap lacks says so, and --fail-on-unknown (UnknownCompletable) leaves
// it out; missing input makes a rule the user's to complete whatever else
// it waits on.
func TestRuleCategories(t *testing.T) {
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	s.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	s.SetComplete(snapshot.Nodes, nil)
	s.SetCoverage(snapshot.Pods, snapshot.StatusForbidden, "")
	nodes := check.Needs(snapshot.Nodes)
	cs := []check.Check{
		fakeCheck("optin", nodes, func(c *check.Context) ([]finding.Finding, error) {
			c.NotRequested("optin", "images were not read")
			return nil, nil
		}),
		fakeCheck("knowledge", nodes, func(c *check.Context) ([]finding.Finding, error) {
			c.Unknowable("knowledge", "no end date is tabled")
			return nil, nil
		}),
		fakeCheck("both", check.Needs(snapshot.Nodes, snapshot.Pods), func(c *check.Context) ([]finding.Finding, error) {
			c.NotRequested("both", "images were not read")
			return nil, nil
		}),
		fakeCheck("plain", nodes, func(c *check.Context) ([]finding.Finding, error) {
			c.Incomplete("plain", "a tag is not a version")
			return nil, nil
		}),
	}
	r := Run(s, cs, Options{})
	got := map[string]string{}
	for _, c := range r.Checks {
		got[c.ID] = c.Rules[0].Category
	}
	want := map[string]string{"optin": report.CategoryOptIn, "knowledge": report.CategoryKnowledge, "both": report.CategoryInput, "plain": report.CategoryInput}
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: category %q, want %q", id, got[id], w)
		}
	}
	if open := strings.Join(r.UnknownCompletable(), ","); open != "both,plain" {
		t.Errorf("UnknownCompletable = %s, want both,plain", open)
	}
	if !r.Unknown() {
		t.Error("Unknown() leaves out opt-in and knowledge rules")
	}
	cov := report.Coverage(r)
	if strings.Join(cov.NotRequested, ",") != "optin" || strings.Join(cov.UnknownToKubegap, ",") != "knowledge" {
		t.Errorf("coverage summary: not requested %v, unknown %v", cov.NotRequested, cov.UnknownToKubegap)
	}
}

// TestRequiredReadNoRuleNeedsNeverPasses is issue 28's defect 2 at its
// mechanism: a required input that no rule lists in Needs, when it fails
// (error, forbidden, not read, in the input but incomplete), still keeps
// the check from passing, and each rule names it as missing.
func TestRequiredReadNoRuleNeedsNeverPasses(t *testing.T) {
	none := func(*check.Context) ([]finding.Finding, error) { return nil, nil }
	c := fakeCheck("forgets-pods", check.Needs(snapshot.Nodes, snapshot.Pods), none)
	c.Rules = []check.Rule{{ID: "nodes-rule", Needs: []snapshot.Resource{snapshot.Nodes}}}
	for _, tc := range []struct {
		name string
		set  func(*snapshot.Snapshot)
	}{
		{"error", func(s *snapshot.Snapshot) {
			s.SetCoverage(snapshot.Pods, snapshot.StatusError, "the server is currently unable to handle the request")
		}},
		{"forbidden", func(s *snapshot.Snapshot) {
			s.SetCoverage(snapshot.Pods, snapshot.StatusForbidden, "pods is forbidden")
		}},
		{"not read", func(*snapshot.Snapshot) {}},
		{"incomplete", func(s *snapshot.Snapshot) { s.SetCoverage(snapshot.Pods, snapshot.StatusRead, "") }},
	} {
		s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
		s.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
		s.SetComplete(snapshot.Nodes, nil)
		tc.set(s)
		s.Finish()
		res := Run(s, []check.Check{c}, Options{}).Checks[0]
		if res.Status == report.Pass {
			t.Errorf("%s pods: the check passes", tc.name)
		}
		if len(res.Rules) != 1 || !slices.Contains(res.Rules[0].Missing, snapshot.Pods.String()) || !strings.Contains(res.Rules[0].Reason, "pods") {
			t.Errorf("%s pods: rules %+v do not name pods as missing", tc.name, res.Rules)
		}
	}
	// With every required input complete it passes: the rule is not
	// made partial by an input that is there.
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	for _, r := range []snapshot.Resource{snapshot.Nodes, snapshot.Pods} {
		s.SetCoverage(r, snapshot.StatusRead, "")
		s.SetComplete(r, nil)
	}
	s.Finish()
	if res := Run(s, []check.Check{c}, Options{}).Checks[0]; res.Status != report.Pass {
		t.Errorf("complete input: %s %q, want pass", res.Status, res.Reason)
	}
	// An optional input that no rule needs stays out of the verdict.
	opt := fakeCheck("optional-pods", []check.Input{{Resource: snapshot.Nodes}, check.Optional(snapshot.Pods)}, none)
	opt.Rules = c.Rules
	s = snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	s.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	s.SetComplete(snapshot.Nodes, nil)
	s.SetCoverage(snapshot.Pods, snapshot.StatusForbidden, "pods is forbidden")
	s.Finish()
	if res := Run(s, []check.Check{opt}, Options{}).Checks[0]; res.Status != report.Pass {
		t.Errorf("optional pods forbidden: %s %q, want pass", res.Status, res.Reason)
	}
}

// bareCoreDNS is a CoreDNS 1.8.3 pod whose workload is not in the input,
// under a ClusterRole without endpointslices: a high addon-rbac-gap finding.
const bareCoreDNS = `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: coredns-5d78c9869d-x2x4q, namespace: kube-system}
  spec:
    serviceAccountName: coredns
    containers:
    - {name: coredns, image: registry.k8s.io/coredns/coredns:v1.8.3}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRole
  metadata: {name: system:coredns}
  rules:
  - {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- apiVersion: rbac.authorization.k8s.io/v1
  kind: ClusterRoleBinding
  metadata: {name: system:coredns}
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:coredns}
  subjects:
  - {kind: ServiceAccount, name: coredns, namespace: kube-system}
`

// TestAddonRBACGapPodsFailed is issue 28's reproducer of defect 2: the
// pods LIST fails with a 500 on a cluster whose only CoreDNS is a bare
// pod. The high finding cannot be made, and the check must not pass.
func TestAddonRBACGapPodsFailed(t *testing.T) {
	c, ok := checks.Lookup("addon-rbac-gap")
	if !ok {
		t.Fatal("addon-rbac-gap is not registered")
	}
	load := func(pods snapshot.Status) *snapshot.Snapshot {
		path := filepath.Join(t.TempDir(), "cluster.yaml")
		if err := os.WriteFile(path, []byte(bareCoreDNS), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := snapshot.LoadPaths([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range c.Reads {
			s.SetCoverage(r.Resource, snapshot.StatusRead, "")
			s.SetComplete(r.Resource, nil)
		}
		if pods != snapshot.StatusRead {
			s.Drop(snapshot.Pods)
			s.SetCoverage(snapshot.Pods, pods, "the server is currently unable to handle the request (get pods)")
		}
		return s
	}
	if res := Run(load(snapshot.StatusRead), []check.Check{c}, Options{}); res.Checks[0].Status != report.Fail || !res.AtOrAbove(finding.High) {
		t.Fatalf("with its pods: %s, %d findings; want a high finding", res.Checks[0].Status, len(res.Findings))
	}
	res := Run(load(snapshot.StatusError), []check.Check{c}, Options{}).Checks[0]
	// Both of its rules read pods: each is left open, naming them.
	if res.Status == report.Pass || len(res.Rules) != 2 {
		t.Errorf("pods failed: %s %q, rules %+v; want partial with its two rules open", res.Status, res.Reason, res.Rules)
	}
	for _, r := range res.Rules {
		if r.Status == report.RuleEvaluated || !slices.Contains(r.Missing, snapshot.Pods.String()) {
			t.Errorf("pods failed: rule %s %s, missing %v; want it open naming v1/pods", r.ID, r.Status, r.Missing)
		}
	}
}
