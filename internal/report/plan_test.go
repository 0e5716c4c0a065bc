package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
)

func TestPlanOrdersEveryUpgradeFinding(t *testing.T) {
	ds := finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "azure-cns"}
	pdb := finding.ObjectRef{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "payments", Name: "checkout"}
	node := finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	r := &Report{TargetVersion: "1.36", Findings: []finding.Finding{
		{ID: "a", Check: "pdb-blocks-drain", Severity: finding.High, Title: "budget", Objects: []finding.ObjectRef{pdb, node}, Cases: []string{"pdb"}},
		{ID: "b", Check: "upgrade-preflight", Severity: finding.Medium, Preflight: finding.PreflightDuring, Title: "budget at target",
			Objects: []finding.ObjectRef{pdb}, Cases: []string{"pdb"}},
		{ID: "c", Check: "host-binary-glibc", Severity: finding.High, Title: "glibc", Objects: []finding.ObjectRef{ds, node}, Cases: []string{"glibc"}},
		{ID: "d", Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore, Title: "glibc at target",
			Objects: []finding.ObjectRef{ds, node}, Cases: []string{"glibc"}},
		{ID: "e", Check: "version-skew", Severity: finding.Low, Title: "low skew", Objects: []finding.ObjectRef{node}},
		{ID: "f", Check: "image-pull-always", Severity: finding.High, Title: "not about upgrades", Objects: []finding.ObjectRef{node}},
		{ID: "g", Check: "upgrade-preflight", Severity: finding.Critical, Preflight: finding.PreflightDuring, Title: "critical during",
			Objects: []finding.ObjectRef{node}, Cases: []string{"x"}},
	}}
	plan := Plan(r)
	var got []string
	for _, st := range plan {
		got = append(got, st.Phase+":"+st.FindingID)
	}
	want := []string{"before:d", "during:g", "during:a"}
	if len(got) != len(want) {
		t.Fatalf("plan = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] || plan[i].Step != i+1 {
			t.Fatalf("plan = %v, want %v", got, want)
		}
	}
	if len(plan[0].Also) != 1 || plan[0].Also[0].FindingID != "c" || len(plan[2].Also) != 1 || plan[2].Also[0].FindingID != "b" {
		t.Errorf("folds = %+v / %+v", plan[0].Also, plan[2].Also)
	}
	if Plan(&Report{Findings: r.Findings}) != nil {
		t.Error("a plan without a target")
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Plan []PlanStep `json:"plan"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back.Plan) != 3 || back.Plan[0].FindingID != "d" {
		t.Errorf("JSON plan = %+v (%v)", back.Plan, err)
	}
	if r.Plan != nil {
		t.Error("WriteJSON changed the report it was given")
	}
}
