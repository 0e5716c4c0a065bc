package audit

import (
	"errors"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func fakeCheck(id string, reads []checks.Input, run func(*checks.Context) ([]finding.Finding, error)) checks.Check {
	return checks.Check{ID: id, Title: id, Severity: finding.High, Reads: reads, Cases: []string{"c"}, Run: run}
}

func oneFinding(sev finding.Severity) func(*checks.Context) ([]finding.Finding, error) {
	return func(*checks.Context) ([]finding.Finding, error) {
		return []finding.Finding{{Severity: sev, Title: "gap", Objects: []finding.ObjectRef{{Kind: "Node", Name: "n"}}}}, nil
	}
}

func TestSelect(t *testing.T) {
	all := []checks.Check{fakeCheck("a", nil, nil), fakeCheck("b", nil, nil), fakeCheck("c", nil, nil)}
	ids := func(cs []checks.Check) string {
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
		{nil, nil, "a,b,c", ""},
		{[]string{"c", "a"}, nil, "a,c", ""},
		{nil, []string{"b"}, "a,c", ""},
		{[]string{"a"}, []string{"a"}, "", "no check left"},
		{[]string{"zzz"}, nil, "", `unknown check "zzz" (known: a, b, c)`},
		{nil, []string{"zzz"}, "", `unknown check "zzz"`},
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
	cs := []checks.Check{
		fakeCheck("a", checks.Needs(snapshot.Pods, snapshot.Nodes), nil),
		fakeCheck("b", []checks.Input{checks.Optional(snapshot.NetworkAttachmentDefinitions), {Resource: snapshot.Nodes}}, nil),
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

// TestRunStatuses: pass, fail, not-evaluated for a forbidden required
// input, an optional input that does not block, a check's own
// not-evaluated, an error and a panic — and the audit goes on after each.
func TestRunStatuses(t *testing.T) {
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster})
	s.SetCoverage(snapshot.Nodes, snapshot.StatusRead, "")
	s.SetCoverage(snapshot.Pods, snapshot.StatusForbidden, `pods is forbidden: User "x" cannot list`)
	s.SetCoverage(snapshot.NetworkAttachmentDefinitions, snapshot.StatusNotServed, "")
	s.Finish()
	ran := map[string]bool{}
	mark := func(id string, f func(*checks.Context) ([]finding.Finding, error)) func(*checks.Context) ([]finding.Finding, error) {
		return func(c *checks.Context) ([]finding.Finding, error) { ran[id] = true; return f(c) }
	}
	none := func(*checks.Context) ([]finding.Finding, error) { return nil, nil }
	cs := []checks.Check{
		fakeCheck("pass", checks.Needs(snapshot.Nodes), mark("pass", none)),
		fakeCheck("fail", checks.Needs(snapshot.Nodes), mark("fail", oneFinding(finding.Medium))),
		fakeCheck("forbidden", checks.Needs(snapshot.Nodes, snapshot.Pods), mark("forbidden", none)),
		fakeCheck("optional", []checks.Input{{Resource: snapshot.Nodes}, checks.Optional(snapshot.NetworkAttachmentDefinitions)}, mark("optional", none)),
		fakeCheck("unread", checks.Needs(snapshot.Events), mark("unread", none)),
		fakeCheck("cannot", checks.Needs(snapshot.Nodes), mark("cannot", func(*checks.Context) ([]finding.Finding, error) {
			return nil, checks.NotEvaluated("no node reports its OS")
		})),
		fakeCheck("errs", checks.Needs(snapshot.Nodes), mark("errs", func(*checks.Context) ([]finding.Finding, error) {
			return nil, errors.New("boom")
		})),
		fakeCheck("panics", checks.Needs(snapshot.Nodes), mark("panics", func(*checks.Context) ([]finding.Finding, error) {
			panic("a bug in the check")
		})),
	}
	r := Run(s, cs, Options{})
	want := map[string]struct {
		status report.Status
		reason string
	}{
		"pass":      {report.Pass, ""},
		"fail":      {report.Fail, ""},
		"forbidden": {report.NotEvaluated, "v1/pods forbidden (pods is forbidden"},
		"optional":  {report.Pass, ""},
		"unread":    {report.NotEvaluated, "v1/events was not read"},
		"cannot":    {report.NotEvaluated, "no node reports its OS"},
		"errs":      {report.NotEvaluated, "check failed: boom"},
		"panics":    {report.NotEvaluated, "check failed: panic"},
	}
	for _, c := range r.Checks {
		w := want[c.ID]
		if c.Status != w.status || !strings.HasPrefix(c.Reason, w.reason) {
			t.Errorf("%s: %s %q, want %s %q", c.ID, c.Status, c.Reason, w.status, w.reason)
		}
	}
	if ran["forbidden"] || ran["unread"] {
		t.Error("a check ran without its required input")
	}
	if len(r.Findings) != 1 || r.Findings[0].Check != "fail" || r.Summary.Medium != 1 {
		t.Errorf("findings = %+v, summary = %+v", r.Findings, r.Summary)
	}
	if !r.AtOrAbove(finding.Medium) || r.AtOrAbove(finding.High) {
		t.Error("AtOrAbove disagrees with the findings")
	}
}
