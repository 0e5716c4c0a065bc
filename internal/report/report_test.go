package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
	"sigs.k8s.io/yaml"
)

func sample() *Report {
	r := New(snapshot.Source{Type: snapshot.SourceCluster, Context: "prod", ServerVersion: "v1.35.4"},
		[]snapshot.Coverage{{Resource: "v1/nodes", Status: snapshot.StatusRead, Count: 3},
			{Resource: "v1/pods", Status: snapshot.StatusForbidden}})
	var nodes []finding.ObjectRef
	for i := range 30 {
		nodes = append(nodes, finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: fmt.Sprintf("n%02d", i)})
	}
	r.Findings = []finding.Finding{
		{Check: "b-check", Severity: finding.Low, Title: "low one", Objects: nodes[:1], Cases: []string{"case-b"}},
		{Check: "a-check", Severity: finding.High, Title: "high one", Message: strings.Repeat("word ", 60),
			Objects: nodes, Evidence: []string{"e1", "e2"}, Remediation: "fix it", Cases: []string{"case-a", "case-b"}},
		{Check: "a-check", Severity: finding.Critical, Title: "critical one", Objects: nodes[:2], Cases: []string{"case-a"}},
	}
	r.Checks = []CheckResult{{ID: "a-check", Status: Fail, Findings: 2}, {ID: "b-check", Status: Fail, Findings: 1},
		{ID: "c-check", Status: NotEvaluated, Reason: "v1/pods forbidden",
			Rules: []RuleResult{{ID: "c-check", Status: RuleSkipped, Reason: "v1/pods forbidden", Missing: []string{"v1/pods"}}}}}
	r.Finish()
	return r
}

func TestFinishSortsAndCounts(t *testing.T) {
	r := sample()
	var order []string
	for _, f := range r.Findings {
		order = append(order, f.Title)
	}
	if got := strings.Join(order, ","); got != "critical one,high one,low one" {
		t.Errorf("order = %s", got)
	}
	if r.Summary != (Summary{Critical: 1, High: 1, Low: 1}) {
		t.Errorf("summary = %+v", r.Summary)
	}
}

func TestWriteJSONEmptyListsAreArrays(t *testing.T) {
	r := New(snapshot.Source{Type: snapshot.SourceFiles}, nil)
	r.Finish()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"coverage", "checks", "findings"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s = %v, want an array (never null)", k, m[k])
		}
	}
	if m["apiVersion"] != APIVersion || m["kind"] != Kind {
		t.Errorf("header = %v %v", m["apiVersion"], m["kind"])
	}
}

func TestWriteYAMLIsTheJSONContract(t *testing.T) {
	r := sample()
	var y, j bytes.Buffer
	if err := WriteYAML(&y, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := yaml.YAMLToJSON(y.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	json.Unmarshal(fromYAML, &a)
	json.Unmarshal(j.Bytes(), &b)
	if fmt.Sprint(a) != fmt.Sprint(b) || !strings.Contains(y.String(), "kind: AuditReport") {
		t.Errorf("YAML differs from JSON:\n%s", y.String())
	}
}
