package dns

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func corednsItems(f finding.Finding) []string {
	var out []string
	for _, it := range f.EvidenceItems {
		out = append(out, it.String())
	}
	return out
}

// TestCapacityEvidenceItems: the memory limit, the replica count, the
// nodes' allocatable CPU (grouped by value) and the OOM-killed pods'
// statuses are quoted as the fixture writes them and resolve against it.
func TestCapacityEvidenceItems(t *testing.T) {
	fs, _ := run(t, corednsCapacityCheck(), checktest.Complete(checktest.Load(t, "gap.json")))
	for _, w := range []struct {
		title string
		sev   finding.Severity
		items []string
	}{
		{"memory limit 50Mi", finding.High,
			[]string{"Deployment/kube-system/coredns: spec.template.spec.containers[name=coredns].resources.limits.memory=50Mi"}},
		{"2 replicas for 40 schedulable nodes", finding.Medium, []string{
			"Deployment/kube-system/coredns: spec.replicas=2",
			"40 Nodes (node-00, node-01, node-02, node-03, node-04, node-05, node-06, node-07, node-08, node-09 and 30 more): status.allocatable.cpu=7800m",
		}},
	} {
		f := findTitle(t, fs, w.title, w.sev)
		if got := corednsItems(f); !slices.Equal(got, w.items) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w.items, "\n  "))
		}
	}
	oom := findTitle(t, fs, "OOM-killed (2 pods)", finding.High)
	if items := oom.EvidenceItems; len(items) == 0 || !strings.Contains(items[0].String(), "lastState.terminated.reason=OOMKilled") {
		t.Errorf("OOM items %v", items)
	}
	if n := checktest.EvidenceTrue(t, fs, "gap.json"); n < 4 {
		t.Errorf("%d items resolved, want at least 4", n)
	}
}

// TestCapacityUnsetReplicas: a CoreDNS Deployment without spec.replicas
// runs one, and the evidence says the field is absent; it used to say
// "spec.replicas 1". The cordoned node is not counted or quoted.
func TestCapacityUnsetReplicas(t *testing.T) {
	const file = "coredns-capacity-unset-replicas.yaml"
	fs, _ := run(t, corednsCapacityCheck(), checktest.Complete(checktest.Load(t, file)))
	f := findTitle(t, fs, "1 replicas for 3 schedulable nodes", finding.Medium)
	want := []string{
		"Deployment/kube-system/coredns: spec.replicas absent",
		"2 Nodes (worker-a, worker-b): status.allocatable.cpu=4",
		"Node/worker-c: status.allocatable.cpu=3920m",
	}
	if got := corednsItems(f); !slices.Equal(got, want) {
		t.Errorf("items\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, e := range f.Evidence {
		if strings.Contains(e, "spec.replicas 1") || strings.Contains(e, "spec.replicas=1") || strings.Contains(e, "worker-d") {
			t.Errorf("evidence %q: a replica count the object does not write, or the cordoned node", e)
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
}
