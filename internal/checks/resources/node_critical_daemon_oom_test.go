package resources

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const caseMultusOOM = "multus-thick-daemon-oom-cascade-2023-2026"

// Before the reboots: the sample's 50Mi limit is medium, cites the case
// and says the init container leaves the pod Burstable.
func TestNodeCriticalDaemonOOMGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "node-critical-daemon-oom/gap.yaml"))
	fs, _, ok := checktest.Run(t, nodeCriticalDaemonOOMCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Severity != finding.Medium || fs[0].Cases[0] != caseMultusOOM {
		t.Fatalf("findings %v, want one medium citing %s", fs, caseMultusOOM)
	}
	if !checktest.HasObject(fs, "DaemonSet", "kube-system", "kube-multus-ds") || !strings.Contains(fs[0].Message, "Burstable") {
		t.Errorf("finding %v %q does not name the DaemonSet or the Burstable init container", fs[0].Objects, fs[0].Message)
	}
	checktest.EvidenceTrue(t, fs, "node-critical-daemon-oom/gap.yaml")
}

// No memory limit and a Guaranteed init container: nothing to report.
func TestNodeCriticalDaemonOOMClean(t *testing.T) {
	checktest.Quiet(t, nodeCriticalDaemonOOMCheck(), checktest.Complete(checktest.Load(t, "node-critical-daemon-oom/clean.yaml")))
}

// Under way: a pod last OOM-killed makes it high and is named.
func TestNodeCriticalDaemonOOMKilledIsHigh(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "node-critical-daemon-oom/oomkilled.yaml"))
	fs, _, _ := checktest.Run(t, nodeCriticalDaemonOOMCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.High || !checktest.HasObject(fs, "Pod", "kube-system", "kube-multus-ds-x7k2p") {
		t.Fatalf("findings %v, want one high naming the OOM-killed pod", fs)
	}
	checktest.EvidenceTrue(t, fs, "node-critical-daemon-oom/oomkilled.yaml")
}

// A limit above every reported burst, or an image that is not the thick
// daemon, is left alone; a mirrored image is matched by its command.
func TestNodeCriticalDaemonOOMMatching(t *testing.T) {
	for _, tc := range []struct {
		image, limit string
		command      []string
		flagged      bool
	}{
		{"ghcr.io/k8snetworkplumbingwg/multus-cni:v4.2.2-thick", "512Mi", nil, false},
		{"ghcr.io/k8snetworkplumbingwg/multus-cni:v4.2.2-thick", "500Mi", nil, true},
		{"ghcr.io/k8snetworkplumbingwg/multus-cni:v4.2.2", "50Mi", []string{"/entrypoint.sh"}, false},
		{"registry.example.com/mirror/multus:v4", "50Mi", []string{"/usr/src/multus-cni/bin/multus-daemon"}, true},
	} {
		s := checktest.Complete(checktest.Load(t, "node-critical-daemon-oom/gap.yaml"))
		c := &s.DaemonSets[0].Spec.Template.Spec.Containers[0]
		c.Image, c.Command = tc.image, tc.command
		c.Resources.Limits[corev1ResourceMemory] = mustQuantity(t, tc.limit)
		fs, _, _ := checktest.Run(t, nodeCriticalDaemonOOMCheck(), s)
		if (len(fs) == 1) != tc.flagged {
			t.Errorf("%s %s %v: findings %v, want flagged %v", tc.image, tc.limit, tc.command, fs, tc.flagged)
		}
	}
}

const corev1ResourceMemory = corev1.ResourceMemory

func mustQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
