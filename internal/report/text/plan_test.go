package text

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

// TestPlanNamesFindingsOfEveryCheck: the text plan states the current
// version and gives each step its finding ID and check, a budget from
// pdb-blocks-drain included, not only the preflight's own findings.
func TestPlanNamesFindingsOfEveryCheck(t *testing.T) {
	pdb := finding.ObjectRef{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "payments", Name: "checkout"}
	r := &report.Report{TargetVersion: "1.35",
		CurrentVersion: &report.CurrentVersion{Version: "1.34", Inferred: true, Basis: "the newest kubelet"},
		Findings: []finding.Finding{
			{ID: "kg-budget", Check: "pdb-blocks-drain", Severity: finding.High, Title: "PodDisruptionBudget payments/checkout never allows an eviction",
				Objects: []finding.ObjectRef{pdb}, Remediation: "Relax the budget."},
			{ID: "kg-cgroup", Check: "upgrade-preflight", Severity: finding.High, Preflight: finding.PreflightBefore, Title: "cgroup v1",
				Objects: []finding.ObjectRef{{APIVersion: "v1", Kind: "Node", Name: "n1"}}, Remediation: "Move to cgroup v2."},
		}}
	var b bytes.Buffer
	if err := Write(&b, r, Options{Width: 200}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	plan := out[strings.Index(out, "UPGRADE PLAN TO 1.35"):]
	for _, want := range []string{"Current version: 1.34 (inferred; the newest kubelet)", "1. (before) cgroup v1", "finding kg-cgroup [upgrade-preflight]; objects: Node/n1",
		"2. (during) PodDisruptionBudget payments/checkout never allows an eviction", "finding kg-budget [pdb-blocks-drain]"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(plan, "kg-budget") {
		t.Errorf("the plan leaves out the budget:\n%s", plan)
	}
}
