package resources

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestCPULimitCFS(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, cpuLimitCFSKernelCheck(), checktest.Complete(checktest.Load(t, "cfs-nodes.yaml")))
	if !ok {
		t.Fatal("not evaluated")
	}
	want := map[string]finding.Severity{"old-53": finding.Low, "ubuntu-1604": finding.Info}
	for _, f := range fs {
		if !slices.Contains(f.Cases, cfsCase) || !slices.Contains(f.Cases, omioCase) {
			t.Errorf("%s: cases %v", f.Title, f.Cases)
		}
		for _, o := range f.Objects {
			if sev, ok := want[o.Name]; !ok || sev != f.Severity {
				t.Errorf("node %s: %v (listed %v)", o.Name, f.Severity, ok)
			}
			delete(want, o.Name)
		}
	}
	if len(want) != 0 {
		t.Errorf("not flagged: %v", want)
	}
	// The 4.15 kernel may carry a backport: the rule cannot pass.
	if _, ok := ctx.Notes()[ruleCFS]; !ok {
		t.Error("an unknown backport left the rule complete")
	}
}

func TestCPULimitCFSModernPasses(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "cfs-nodes.yaml"))
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.KernelVersion = "6.1.109-118.189.amzn2023.x86_64"
	}
	checktest.Quiet(t, cpuLimitCFSKernelCheck(), s)
}

func TestKernelFixTable(t *testing.T) {
	facts, err := loadCFS()
	if err != nil {
		t.Fatal(err)
	}
	fixes := facts.FixedIn
	for k, want := range map[string][2]bool{
		"5.4.0-150-generic": {true, true}, "5.3.9": {true, true}, "5.3.8": {false, true},
		"4.19.84": {false, false}, "3.10.0-1160.el7.x86_64": {false, false}, "6.8.0": {true, true},
	} {
		v, ok := kernelVersion(k)
		if !ok {
			t.Fatalf("kernelVersion(%q) failed", k)
		}
		f, known := fixed(fixes, v)
		if f != want[0] || known != want[1] {
			t.Errorf("%s: fixed %v known %v, want %v", k, f, known, want)
		}
	}
}
