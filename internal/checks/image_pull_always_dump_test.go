package checks_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestImagePullAlwaysOnTheREADMEDump: issue 12. The README's recipe-less
// dump holds no StatefulSets, yet the :latest/Always DaemonSet on 400
// nodes it does hold is a high finding, and the check fails rather than
// going unevaluated. The Nodes are generated here, as kubectl would print
// them, into the one List the dump is.
func TestImagePullAlwaysOnTheREADMEDump(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "image-pull-always", "kubectl-dump.yaml"))
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
	r := audit.Run(s, []checks.Check{c}, audit.Options{})
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
