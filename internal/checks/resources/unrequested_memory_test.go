package resources

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestUnrequestedMemoryGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "unrequested-memory/gap.yaml"))
	fs, _, ok := checktest.Run(t, unrequestedMemoryCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := map[string]finding.Finding{}
	for _, f := range fs {
		got[f.Title] = f
		if len(f.Cases) != 1 || f.Cases[0] != appfarmCase {
			t.Errorf("%s cites %v", f.Title, f.Cases)
		}
	}
	sandbox := got["Pool cloud.google.com/gke-nodepool=sandbox: 8 of 12 workload pods ask for no memory"]
	batch := got["Pool cloud.google.com/gke-nodepool=batch: 3 of 10 workload pods ask for no memory"]
	if len(fs) != 2 || sandbox.Severity != finding.Medium || batch.Severity != finding.Low {
		t.Fatalf("findings: %+v", fs)
	}
	if !checktest.HasObject([]finding.Finding{sandbox}, "ReplicaSet", "customers", "solution-6c8f") ||
		!checktest.HasObject([]finding.Finding{sandbox}, "Pod", "customers", "preview-0") {
		t.Errorf("sandbox objects: %v", sandbox.Objects)
	}
	if checktest.HasObject(fs, "DaemonSet", "kube-system", "agent") || checktest.HasObject(fs, "Pod", "kube-system", "etcd-sandbox-a") {
		t.Error("DaemonSet or static pods counted")
	}
	if !strings.Contains(strings.Join(sandbox.Evidence, "\n"), "ReplicaSet customers/solution-6c8f (6)") {
		t.Errorf("sandbox evidence: %v", sandbox.Evidence)
	}
}

func TestUnrequestedMemoryClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "unrequested-memory/clean.yaml"))
	checktest.Quiet(t, unrequestedMemoryCheck(), s)
}
