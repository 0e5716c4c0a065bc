package checks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// auditFixture runs one check through the audit engine on fixture files
// (paths under internal/checks: each check's testdata is in its area
// package), loaded as `kubegap audit --from` loads them: present, never
// complete.
func auditFixture(t *testing.T, id string, files ...string) (report.CheckResult, []finding.Finding) {
	t.Helper()
	s, err := snapshot.LoadPaths(files)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := checks.Lookup(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	r := audit.Run(s, []check.Check{c}, audit.Options{})
	return r.Checks[0], r.Findings
}

func ruleStatus(res report.CheckResult, id string) report.RuleStatus {
	for _, rr := range res.Rules {
		if rr.ID == id {
			return rr.Status
		}
	}
	return "missing"
}

// TestWebhookFindingsWithoutMutatingWebhooks: issue 12. A fail-closed pod
// webhook is reported although no MutatingWebhookConfiguration, Namespace
// or EndpointSlice is in the input; the rules that needed them say so.
func TestWebhookFindingsWithoutMutatingWebhooks(t *testing.T) {
	res, fs := auditFixture(t, "webhook-blast-radius", "availability/testdata/webhook-blast-radius/other-namespace-services.yaml")
	if res.Status != report.Fail || len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Fatalf("status %s (%s), findings %+v", res.Status, res.Reason, fs)
	}
	for _, id := range []string{"fail-closed-kube-system", "fail-closed-backend", "own-namespace", "long-timeout"} {
		if st := ruleStatus(res, id); st != report.RulePartial {
			t.Errorf("rule %s is %s, want partial", id, st)
		}
	}
}

// TestPDBFindingsWithoutPods: issue 12. A maxUnavailable 0 budget is a
// finding without a single pod in the input.
func TestPDBFindingsWithoutPods(t *testing.T) {
	res, fs := auditFixture(t, "pdb-blocks-drain", "availability/testdata/pdb-blocks-drain/budgets-only.yaml")
	if res.Status != report.Fail || len(fs) != 1 {
		t.Fatalf("status %s (%s), findings %+v", res.Status, res.Reason, fs)
	}
	if st := ruleStatus(res, "no-eviction-allowed"); st != report.RulePartial {
		t.Errorf("rule no-eviction-allowed is %s, want partial (pods unknown)", st)
	}
}

// TestImagePullAlwaysOnTheREADMEDump: issue 12. The README's recipe-less
// dump holds no StatefulSets, yet the :latest/Always DaemonSet on 400
// nodes it does hold is a high finding, and the check fails rather than
// going unevaluated. The Nodes are generated here, as kubectl would print
// them, into the one List the dump is.
func TestImagePullAlwaysOnTheREADMEDump(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("registries", "testdata", "image-pull-always", "kubectl-dump.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Metadata   map[string]any   `json:"metadata"`
		Items      []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	var nodes []map[string]any
	for i := range 400 {
		nodes = append(nodes, map[string]any{
			"apiVersion": "v1", "kind": "Node",
			"metadata": map[string]any{"name": fmt.Sprintf("node-%03d", i),
				"labels": map[string]any{"kubernetes.io/os": "linux", "kubernetes.io/hostname": fmt.Sprintf("node-%03d", i)}},
			"status": map[string]any{
				"conditions": []any{map[string]any{"type": "Ready", "status": "True"}},
				"nodeInfo": map[string]any{"kubeletVersion": "v1.37.2", "containerRuntimeVersion": "containerd://2.1.4",
					"osImage": "Ubuntu 24.04.3 LTS", "kernelVersion": "6.8.0-1030-azure", "operatingSystem": "linux", "architecture": "amd64"},
			},
		})
	}
	list.Items = append(nodes, list.Items...) // kubectl prints them first
	out, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dump.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Status(snapshot.StatefulSets).Status; got == snapshot.StatusRead {
		t.Fatalf("the dump holds StatefulSets (%s): the test would prove nothing", got)
	}
	c, _ := checks.Lookup("image-pull-always")
	r := audit.Run(s, []check.Check{c}, audit.Options{})
	res := r.Checks[0]
	if res.Status != report.Fail {
		t.Fatalf("image-pull-always is %s (%s), want fail", res.Status, res.Reason)
	}
	var high *finding.Finding
	for i, f := range r.Findings {
		if f.Severity == finding.High && strings.Contains(f.Title, "DaemonSet logging/log-shipper") {
			high = &r.Findings[i]
		}
	}
	if high == nil {
		t.Fatalf("no high finding about the DaemonSet: %+v", r.Findings)
	}
	if !strings.Contains(high.Title, "400 nodes") {
		t.Errorf("title %q does not give the 400 nodes", high.Title)
	}
	// What the dump cannot say is named, per rule.
	for _, rr := range res.Rules {
		if rr.ID == "statefulsets" && rr.Status != report.RuleSkipped {
			t.Errorf("the StatefulSet rule is %s without StatefulSets in the input", rr.Status)
		}
	}
}

// TestWorkloadChecksPassOnlyWhenComplete: the healthy fixtures pass once
// every input the rules need is marked complete, as a live read would be,
// and are partial (never pass) as plain files.
func TestWorkloadChecksPassOnlyWhenComplete(t *testing.T) {
	for id, file := range map[string]string{
		"webhook-blast-radius": "availability/testdata/webhook-blast-radius/healthy.yaml",
		"pdb-blocks-drain":     "availability/testdata/pdb-blocks-drain/healthy.yaml",
		"image-pull-always":    "registries/testdata/image-pull-always/healthy.yaml",
	} {
		t.Run(id, func(t *testing.T) {
			s, err := snapshot.LoadPaths([]string{file})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := checks.Lookup(id)
			if got := audit.Run(s, []check.Check{c}, audit.Options{}).Checks[0]; got.Status != report.Partial {
				t.Errorf("from files: %s (%s), want partial", got.Status, got.Reason)
			}
			for _, rule := range check.RulesOf(c) {
				for _, r := range rule.Needs {
					s.SetComplete(r, nil)
				}
			}
			if got := audit.Run(s, []check.Check{c}, audit.Options{}).Checks[0]; got.Status != report.Pass {
				t.Errorf("complete: %s (%s), want pass", got.Status, got.Reason)
			}
		})
	}
}
