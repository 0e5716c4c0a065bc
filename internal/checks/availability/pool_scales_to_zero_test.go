package availability

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestPoolScalesToZeroGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, poolScalesToZeroCheck(), checktest.Complete(checktest.Load(t, "pool-scales-to-zero/gap.yaml")))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	if fs[0].Severity != finding.Medium || fs[0].Cases[0] != caseBerkeleyCore {
		t.Errorf("severity %v, cases %v", fs[0].Severity, fs[0].Cases)
	}
	for _, n := range []string{"hub", "proxy"} {
		if !checktest.HasObject(fs, "Deployment", "data8", n) {
			t.Errorf("Deployment %s not named: %+v", n, fs[0].Objects)
		}
	}
	if checktest.HasObject(fs, "Deployment", "data8", "notebook") {
		t.Error("names a workload of the pool with a minimum of 1")
	}
}

func TestPoolScalesToZeroClean(t *testing.T) {
	checktest.Quiet(t, poolScalesToZeroCheck(), checktest.Complete(checktest.Load(t, "pool-scales-to-zero/ok.yaml")))
}

// Without the status ConfigMap a GKE pool's minimum is in the GKE API
// only: not judged. From files the ConfigMap's absence proves nothing.
func TestPoolScalesToZeroUnknown(t *testing.T) {
	complete := checktest.Complete(checktest.Load(t, "pool-scales-to-zero/gap.yaml"))
	complete.ConfigMaps = nil
	files := checktest.Load(t, "pool-scales-to-zero/gap.yaml")
	files.ConfigMaps = nil
	for name, s := range map[string]*snapshot.Snapshot{"gke without status": complete, "files": files} {
		fs, ctx, _ := checktest.Run(t, poolScalesToZeroCheck(), s)
		if _, noted := ctx.Notes()[ruleOnlyPool]; len(fs) != 0 || !noted {
			t.Errorf("%s: findings %+v, notes %v", name, fs, ctx.Notes())
		}
	}
}

func TestGroupMinimumsStructured(t *testing.T) {
	status := "time: 2026-01-01\nautoscalerStatus: Running\nnodeGroups:\n- name: eks-core-1a2b\n  health:\n    status: Healthy\n    cloudProviderTarget: 1\n    minSize: 0\n    maxSize: 3\n- name: eks-apps-3c4d\n  health: {minSize: 2, maxSize: 9}\n"
	got := groupSizes(status)
	if len(got) != 2 || got["eks-core-1a2b"] != (groupSize{0, 1}) || got["eks-apps-3c4d"].min != 2 {
		t.Errorf("got %v", got)
	}
}

// A min-0 group with nodes that no node's pool label names is not judged.
func TestPoolScalesToZeroUnmatchedGroup(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "pool-scales-to-zero/gap.yaml"))
	for i := range s.Nodes {
		delete(s.Nodes[i].Labels, "cloud.google.com/gke-nodepool")
	}
	fs, ctx, _ := checktest.Run(t, poolScalesToZeroCheck(), s)
	if _, noted := ctx.Notes()[ruleOnlyPool]; len(fs) != 0 || !noted {
		t.Errorf("findings %+v, notes %v", fs, ctx.Notes())
	}
}
