package present

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestNewCase(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	tax := lib.Taxonomy()
	all := []check.Check{
		{ID: "b-check", Title: "B", Cases: check.Prevents("azure-cni-v2-glibc")},
		{ID: "a-check", Title: "A", Cases: check.Prevents("other", "azure-cni-v2-glibc")},
		{ID: "c-check", Title: "C", Cases: check.Related("other")},
	}
	c, _ := lib.Case("azure-cni-v2-glibc")
	p := NewCase(&c, &tax, all)
	if p.AuditCommand != "kubegap audit --checks a-check,b-check" {
		t.Errorf("audit command %q", p.AuditCommand)
	}
	if !strings.Contains(p.AgentPrompt, p.AuditCommand) || !strings.Contains(p.AgentPrompt, c.ID) || strings.Contains(p.AgentPrompt, "\n") {
		t.Errorf("agent prompt should be one line naming the command and the case: %q", p.AgentPrompt)
	}
	if p.CheckLine() != "Check your cluster for this: "+p.AuditCommand {
		t.Errorf("check line %q", p.CheckLine())
	}
	if len(p.Facets) != 4 || p.Facets[0].Terms[0].ID != c.RootCause.Category || p.Facets[0].Terms[0].Name == c.RootCause.Category {
		t.Errorf("root cause facet not named from the taxonomy: %+v", p.Facets[0])
	}

	none := NewCase(&c, &tax, nil)
	if none.AuditCommand != "" || !strings.HasPrefix(none.CheckLine(), "No kubegap check covers this case yet.") {
		t.Errorf("no checks: %q", none.CheckLine())
	}
}

func TestRelated(t *testing.T) {
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	c, _ := lib.Case("azure-cni-v2-glibc")
	rel := Related(lib, &c, 5)
	if len(rel) == 0 || len(rel) > 5 {
		t.Fatalf("%d related cases", len(rel))
	}
	for _, r := range rel {
		if r.ID == c.ID {
			t.Errorf("a case is related to itself")
		}
		shared := false
		for _, f := range library.FacetNames() {
			for _, id := range FacetIDs(&r, f) {
				for _, mine := range FacetIDs(&c, f) {
					shared = shared || id == mine
				}
			}
		}
		if !shared {
			t.Errorf("%s shares no facet value with %s", r.ID, c.ID)
		}
	}
}

func TestReportGaps(t *testing.T) {
	r := report.New(snapshot.Source{Type: snapshot.SourceCluster}, []snapshot.Coverage{{Resource: "v1/pods", Status: snapshot.StatusRead, Complete: true}})
	r.Checks = []report.CheckResult{{ID: "a", Status: report.Pass}, {ID: "b", Status: report.Fail}}
	if g := ReportGaps(r); g.Any() {
		t.Errorf("complete report has gaps: %+v", g)
	}
	r.Checks = append(r.Checks, report.CheckResult{ID: "c", Status: report.NotEvaluated, Reason: "forbidden"})
	if g := ReportGaps(r); !g.Any() || len(g.NotEvaluated) != 1 {
		t.Errorf("not-evaluated check not reported: %+v", g)
	}
	files := report.New(snapshot.Source{Type: snapshot.SourceFiles}, []snapshot.Coverage{{Resource: "v1/pods", Status: snapshot.StatusRead}})
	if g := ReportGaps(files); len(g.Coverage) != 1 {
		t.Errorf("incomplete read from files not reported: %+v", g)
	}
	scoped := report.New(snapshot.Source{Type: snapshot.SourceCluster, Scope: snapshot.Scope{Namespaces: []string{"x"}}}, nil)
	if g := ReportGaps(scoped); !g.Scoped || g.Scope != "namespace x" {
		t.Errorf("scope not reported: %+v", g)
	}
}

func TestNewFinding(t *testing.T) {
	f := finding.Finding{Objects: []finding.ObjectRef{
		{Kind: "Pod", Namespace: "b", Name: "p"}, {Kind: "Node", Name: "n"}, {Kind: "Pod", Namespace: "a", Name: "q"}, {Kind: "Pod", Namespace: "b", Name: "r"},
	}, Cases: []string{"x", "y"}}
	p := NewFinding(&f, func(id string) string { return "title " + id })
	if strings.Join(p.Namespaces, ",") != "a,b" || p.Names[1] != "Node/n" || p.CaseRefs[1].Title != "title y" {
		t.Errorf("%+v", p)
	}
	if got := ObjectNames(f.Objects, 2); len(got) != 2 || got[0] != "Pod/b/p" {
		t.Errorf("ObjectNames(2) = %v", got)
	}
}

func TestSchemaFieldsByName(t *testing.T) {
	type withFields struct {
		Supports []string
		Inferred map[string]string
	}
	v := withFields{Supports: []string{"rootCause", "trigger"}, Inferred: map[string]string{"lessons": "our reading"}}
	if got := stringsField(v, "Supports"); len(got) != 2 || SectionName(got[0]) != "root cause" {
		t.Errorf("stringsField = %v", got)
	}
	if got := stringMapField(v, "Inferred"); got["lessons"] != "our reading" {
		t.Errorf("stringMapField = %v", got)
	}
	if stringsField(struct{ X int }{}, "Supports") != nil || stringMapField(struct{ Inferred int }{}, "Inferred") != nil {
		t.Errorf("a missing or differently typed field must read as empty")
	}
}
