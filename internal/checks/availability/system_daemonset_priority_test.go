package availability

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

// testdata/system-daemonset-priority: gap.json has calico-node without a
// priority class and one of its pods Pending unscheduled, the kiam agent
// (DFDS's missing DaemonSet) without one; kube-proxy with
// system-node-critical, a CSI node plugin with a class of its own, a log
// shipper and Cilium's envoy without one (not node-critical by the table).
// clean.json: calico and kiam set system-node-critical, every pod runs.

func TestDaemonPriorityGap(t *testing.T) {
	fs, ctx := run(t, systemDaemonSetPriorityCheck(), "system-daemonset-priority/gap.json", true)
	expect(t, fs, []want{
		{"DaemonSet", "kube-system", "calico-node", "1 pod waiting to be scheduled", finding.High, caseDFDSNodes},
		{"DaemonSet", "kube-system", "kiam-agent", "has no system priority class", finding.Medium, caseDFDSNodes},
	})
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if f.Objects[0].Name == "calico-node" && (!strings.Contains(ev, "calico-node-c") || !strings.Contains(ev, "spec.priority=0")) {
			t.Errorf("calico evidence should name the pending pod and the priority: %s", ev)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestDaemonPriorityClean(t *testing.T) {
	checktest.Quiet(t, systemDaemonSetPriorityCheck(), checktest.Complete(checktest.Load(t, "system-daemonset-priority/clean.json")))
}

// From files the DaemonSets present are judged; silence is not a pass.
func TestDaemonPriorityFiles(t *testing.T) {
	fs, ctx := runOn(t, systemDaemonSetPriorityCheck(), loadFiles(t, "system-daemonset-priority/gap.json"))
	if len(fs) != 2 {
		t.Errorf("gap files: %d findings, want 2", len(fs))
	}
	if ctx.Complete(snapshot.DaemonSets) {
		t.Error("files: DaemonSets complete")
	}
}

// A DaemonSet without status (rendered from a chart) is not "0 nodes
// should run it": the evidence says the status is absent; one with a
// status quotes its counts.
func TestDaemonPriorityStatusAbsent(t *testing.T) {
	s := loadFiles(t, "system-daemonset-priority/gap.json")
	for i := range s.DaemonSets {
		if s.DaemonSets[i].Name == "kiam-agent" {
			s.DaemonSets[i].Status = appsv1.DaemonSetStatus{}
		}
	}
	fs, _ := runOn(t, systemDaemonSetPriorityCheck(), s)
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		switch f.Objects[0].Name {
		case "kiam-agent":
			if !strings.Contains(ev, "status absent") || strings.Contains(ev, "desiredNumberScheduled") {
				t.Errorf("kiam-agent without status: evidence %s", ev)
			}
		case "calico-node":
			if !strings.Contains(ev, "status.desiredNumberScheduled=3, status.numberAvailable=2") {
				t.Errorf("calico-node: evidence %s, want its status counts", ev)
			}
		}
	}
}
