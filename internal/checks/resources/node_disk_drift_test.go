package resources

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestNodeDiskDriftGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	want := map[string]finding.Severity{ruleDiskDrift: finding.Medium, ruleDiskPressure: finding.High, ruleNoSpace: finding.High}
	for _, f := range fs {
		if f.Rule == ruleNoSpace {
			if !checktest.HasObject([]finding.Finding{f}, "Pod", "shop", "app-7d9") {
				t.Errorf("%s does not name the pod: %+v", f.Title, f.Objects)
			}
			delete(want, f.Rule)
			continue
		}
		if want[f.Rule] != f.Severity {
			t.Errorf("%s: severity %v", f.Title, f.Severity)
		}
		delete(want, f.Rule)
		if f.Cases[0] != mojDiskCase {
			t.Errorf("%s: cases %v", f.Title, f.Cases)
		}
		if checktest.HasObject([]finding.Finding{f}, "Node", "", "old-1") {
			t.Errorf("%s names a 100 GiB node", f.Title)
		}
		if !checktest.HasObject([]finding.Finding{f}, "Node", "", "new-1") {
			t.Errorf("%s does not name new-1", f.Title)
		}
	}
	if len(want) != 0 {
		t.Errorf("rules not reported: %v (findings %+v)", want, fs)
	}
	for _, f := range fs {
		if f.Rule == ruleDiskDrift && !checktest.HasObject(fs, "Node", "", "new-2") {
			t.Error("new-2 not named as small")
		}
	}
}

func TestNodeDiskDriftHealthyPasses(t *testing.T) {
	checktest.Quiet(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/ok.yaml")))
}

// From files, a healthy-looking set of nodes proves nothing: a larger
// peer may be missing from the input.
func TestNodeDiskDriftFilesPartial(t *testing.T) {
	_, ctx, _ := checktest.Run(t, nodeDiskDriftCheck(), checktest.Load(t, "node-disk-drift/ok.yaml"))
	if _, ok := ctx.Notes()[ruleDiskDrift]; !ok {
		t.Errorf("no partial note from files: %v", ctx.Notes())
	}
}

// Before the drain, the new node group's smaller disks are already in the
// Node objects: the drift rule names both new nodes, and neither pressure
// nor a failed pull is reported, since nothing has filled up yet.
func TestNodeDiskDriftBeforeDrain(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, nodeDiskDriftCheck(), checktest.Complete(checktest.Load(t, "node-disk-drift/before-drain.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	if len(fs) != 1 || fs[0].Rule != ruleDiskDrift || fs[0].Severity != finding.Medium {
		t.Fatalf("want one medium drift finding, got %+v", fs)
	}
	for _, n := range []string{"new-1", "new-2"} {
		if !checktest.HasObject(fs, "Node", "", n) {
			t.Errorf("%s not named as small: %+v", n, fs[0].Objects)
		}
	}
	if checktest.HasObject(fs, "Node", "", "old-1") || checktest.HasObject(fs, "Node", "", "old-2") {
		t.Errorf("a 100 GiB node is named: %+v", fs[0].Objects)
	}
	if fs[0].Cases[0] != mojDiskCase {
		t.Errorf("cases %v", fs[0].Cases)
	}
}

// TestNodeDiskPressureControlPlane: DiskPressure on a control-plane node
// names it as one and cites the IndieHosters case (detected); on worker
// nodes only (gap.yaml) it does not; the control-plane nodes with free
// disk are quiet.
func TestNodeDiskPressureControlPlane(t *testing.T) {
	c := nodeDiskDriftCheck()
	if r, ok := c.Relation(controlPlaneDiskCase); !ok || r != check.RelDetects {
		t.Fatalf("the check links %s as %q (cited %v), want detects", controlPlaneDiskCase, r, ok)
	}
	fs, _, _ := checktest.Run(t, c, checktest.Complete(checktest.Load(t, "node-disk-drift/control-plane-pressure.yaml")))
	if len(fs) != 1 || fs[0].Rule != ruleDiskPressure || !slices.Contains(fs[0].Cases, controlPlaneDiskCase) ||
		!strings.Contains(fs[0].Message, "cp-1 is a control-plane node") || !checktest.HasObject(fs, "Node", "", "cp-1") {
		t.Fatalf("findings %+v, want one disk-pressure finding naming control-plane node cp-1 and citing %s", fs, controlPlaneDiskCase)
	}
	fs, _, _ = checktest.Run(t, c, checktest.Load(t, "node-disk-drift/gap.yaml"))
	for _, f := range fs {
		if slices.Contains(f.Cases, controlPlaneDiskCase) {
			t.Errorf("%s cites %s without a control-plane node", f.Title, controlPlaneDiskCase)
		}
	}
	checktest.Quiet(t, c, checktest.Complete(checktest.Load(t, "node-disk-drift/control-plane-ok.yaml")))
}
