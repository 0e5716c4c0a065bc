package versions

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const kubeletQPSGap = "kubelet-api-rate-limit/gap.yaml"

// The Zalando state: two nodes below 1.27 beside kube2iam is one medium
// finding naming both nodes and the broker, citing the case; the node on
// 1.27 is not named.
func TestKubeletAPIRateLimitGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, kubeletQPSGap))
	fs, ctx, ok := checktest.Run(t, kubeletAPIRateLimitCheck(), s)
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || !slices.Contains(f.Cases, caseZalandoQPS) {
		t.Errorf("severity %v cases %v, want medium citing %s", f.Severity, f.Cases, caseZalandoQPS)
	}
	for _, n := range []string{"builder-1", "builder-2"} {
		if !checktest.HasObject(fs, "Node", "", n) {
			t.Errorf("node %s not named", n)
		}
	}
	if checktest.HasObject(fs, "Node", "", "worker-1") || !checktest.HasObject(fs, "DaemonSet", "kube-system", "kube2iam") {
		t.Errorf("objects %v: want the two old nodes and kube2iam, not worker-1", f.Objects)
	}
	for _, want := range []string{"kubeAPIQPS 5", "inferred from the version", "builder-1/proxy/configz"} {
		if !strings.Contains(f.Message+f.Remediation+strings.Join(f.Evidence, "\n"), want) {
			t.Errorf("finding does not say %q:\n%s\n%s\n%v", want, f.Message, f.Remediation, f.Evidence)
		}
	}
	if n := checktest.EvidenceTrue(t, fs, kubeletQPSGap); n != 2 {
		t.Errorf("%d evidence items, want the nodes' versions and the broker's image", n)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v", ctx.Notes())
	}
}

func TestKubeletAPIRateLimitClean(t *testing.T) {
	checktest.Quiet(t, kubeletAPIRateLimitCheck(), checktest.Complete(checktest.Load(t, "kubelet-api-rate-limit/clean.yaml")))
}

// Without a complete DaemonSet read the finding stays low, and the rule
// says the broker that would raise it could not be ruled out.
func TestKubeletAPIRateLimitWithoutDaemonSets(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, kubeletQPSGap))
	s.Drop(snapshot.DaemonSets)
	s.SetCoverage(snapshot.DaemonSets, snapshot.StatusForbidden, "daemonsets is forbidden")
	fs, ctx, _ := checktest.Run(t, kubeletAPIRateLimitCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Low {
		t.Fatalf("findings %+v, want one low", fs)
	}
	if n, ok := ctx.Notes()[ruleQPSBroker]; !ok || !strings.Contains(n.Reason, "kube2iam") {
		t.Errorf("notes %v, want the rule partial naming the broker", ctx.Notes())
	}
}

// A node whose kubelet version cannot be read is unknown, never pass.
func TestKubeletAPIRateLimitUnreadableVersion(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "kubelet-api-rate-limit/clean.yaml"))
	s.Nodes[0].Status.NodeInfo.KubeletVersion = ""
	fs, ctx, _ := checktest.Run(t, kubeletAPIRateLimitCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings %+v", fs)
	}
	if n, ok := ctx.Notes()[ruleKubeletQPS]; !ok || n.Skipped {
		t.Errorf("notes %v, want the rule partial", ctx.Notes())
	}
}
