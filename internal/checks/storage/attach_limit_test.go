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

// aws-ebs-csi-driver#1139's m5ad.4xlarge and pull request 1175's
// m6i.8xlarge on v1.5.0: the m6i's 39 exceeds 28-1 slots (medium), the
// m5ad's 25 only fits while no further network interface is attached (low).
func TestAttachLimitEBSNitroGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, attachLimitCheck(), checktest.Complete(checktest.Load(t, "attach-limit/ebs-nitro-gap.yaml")))
	if !ok || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, notes %v", ok, ctx.Notes())
	}
	want := map[string]finding.Severity{"m6i-1": finding.Medium, "m5ad-1": finding.Low}
	for node, sev := range want {
		found := false
		for _, f := range fs {
			if f.Rule == ruleEBSSharedSlots && checktest.HasObject([]finding.Finding{f}, "Node", "", node) {
				found = true
				if f.Severity != sev || len(f.Cases) != 1 || f.Cases[0] != ebsNitroCase ||
					!checktest.HasObject([]finding.Finding{f}, "DaemonSet", "kube-system", "ebs-csi-node") {
					t.Errorf("%s: severity %v cases %v objects %v", node, f.Severity, f.Cases, f.Objects)
				}
			}
		}
		if !found {
			t.Errorf("%s not flagged: %+v", node, fs)
		}
	}
}

func TestAttachLimitEBSNitroClean(t *testing.T) {
	checktest.Quiet(t, attachLimitCheck(), checktest.Complete(checktest.Load(t, "attach-limit/ebs-nitro-clean.yaml")))
}

// The operator's --volume-attach-limit replaces the computed count, and a
// driver image whose release cannot be read leaves the rule unjudged.
func TestAttachLimitEBSNitroOverrideAndUnknown(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "attach-limit/ebs-nitro-gap.yaml"))
	c := &s.DaemonSets[0].Spec.Template.Spec.Containers[0]
	c.Args = append(c.Args, "--volume-attach-limit=20")
	checktest.Quiet(t, attachLimitCheck(), s)

	s = checktest.Complete(checktest.Load(t, "attach-limit/ebs-nitro-gap.yaml"))
	s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image = "k8s.gcr.io/provider-aws/aws-ebs-csi-driver:latest"
	fs, ctx, _ := checktest.Run(t, attachLimitCheck(), s)
	if _, noted := ctx.Notes()[ruleEBSSharedSlots]; !noted || len(fs) != 0 {
		t.Errorf("unknown release: notes %v, findings %d", ctx.Notes(), len(fs))
	}

	// Without the DaemonSets read whole the driver's release is unknown.
	s = checktest.Load(t, "attach-limit/ebs-nitro-gap.yaml")
	s.DaemonSets = nil
	_, ctx, _ = checktest.Run(t, attachLimitCheck(), s)
	if _, noted := ctx.Notes()[ruleEBSSharedSlots]; !noted {
		t.Errorf("no partial note without DaemonSets: %v", ctx.Notes())
	}
}
