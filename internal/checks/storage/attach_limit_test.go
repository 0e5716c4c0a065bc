package storage

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestAttachLimitGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, attachLimitCheck(), checktest.Complete(checktest.Load(t, "attach-limit/gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	for _, w := range []struct {
		kind, ns, name string
		sev            finding.Severity
	}{
		{"Node", "", "user-1", finding.Medium},
		{"Node", "", "user-2", finding.Low},
		{"Node", "", "user-3", -1},
		{"Pod", "data8", "jupyter-alice", finding.High},
	} {
		got := finding.Severity(-1)
		for _, f := range fs {
			if checktest.HasObject([]finding.Finding{f}, w.kind, w.ns, w.name) {
				got = f.Severity
				if f.Cases[0] != berkeleyVolCase {
					t.Errorf("%s: cases %v", f.Title, f.Cases)
				}
			}
		}
		if got != w.sev {
			t.Errorf("%s %s: %v, want %v (findings %+v)", w.kind, w.name, got, w.sev, fs)
		}
	}
}

func TestAttachLimitHealthyPasses(t *testing.T) {
	checktest.Quiet(t, attachLimitCheck(), checktest.Complete(checktest.Load(t, "attach-limit/ok.yaml")))
}

// A node with CSI volumes but no CSINode in the input cannot be judged.
func TestAttachLimitMissingCSINode(t *testing.T) {
	s := checktest.Load(t, "attach-limit/gap.yaml")
	s.CSINodes = s.CSINodes[:0]
	fs, ctx, _ := checktest.Run(t, attachLimitCheck(), s)
	if _, noted := ctx.Notes()[ruleNearLimit]; !noted {
		t.Errorf("no partial note: %v", ctx.Notes())
	}
	for _, f := range fs {
		if f.Rule == ruleNearLimit {
			t.Errorf("judged a node without its CSINode: %s", f.Title)
		}
	}
}
