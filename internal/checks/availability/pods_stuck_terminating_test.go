package availability

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// testdata/pods-stuck-terminating: the newest timestamp is 10:00. gap.json:
// three notebook pods deleted at 09:00 on Ready node-a (a hung runtime, as
// at Berkeley), pg-0 on NotReady node-b, one pod on Ready node-d, and one
// deleted at 09:58 on node-c, within the margin. clean.json: only that
// last one.

func stuckAt(t *testing.T, now time.Time) {
	t.Helper()
	old := stuckNow
	stuckNow = func() time.Time { return now }
	t.Cleanup(func() { stuckNow = old })
}

func TestStuckTerminatingGap(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	fs, ctx := run(t, podsStuckTerminatingCheck(), "pods-stuck-terminating/gap.json", true)
	expect(t, fs, []want{
		{"Node", "", "node-a", "reports Ready but holds 3 pods stuck Terminating", finding.High, caseBerkeley},
		{"Node", "", "node-b", "is NotReady (Ready Unknown) and holds 1 pod", finding.Medium, caseBerkeley},
		{"Node", "", "node-d", "holds 1 pod stuck Terminating", finding.Low, caseBerkeley},
	})
	for _, f := range fs {
		if f.Objects[0].Name == "node-a" && !checktest.HasObject([]finding.Finding{f}, "Pod", "jhub", "jupyter-user2") {
			t.Errorf("node-a's finding should name its pods: %v", f.Objects)
		}
		if f.Objects[0].Name == "node-a" && !strings.Contains(f.Message, "1h0m0s") {
			t.Errorf("age should be measured from the snapshot's newest timestamp: %s", f.Message)
		}
		if want := "reference time (newest timestamp in the input): 2026-11-30T10:00:00Z"; f.Evidence[0] != want {
			t.Errorf("evidence %q, want %q", f.Evidence[0], want)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestStuckTerminatingClean(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	checktest.Quiet(t, podsStuckTerminatingCheck(), checktest.Complete(checktest.Load(t, "pods-stuck-terminating/clean.json")))
}

// The clock caps the reference time: a snapshot whose timestamps lie in
// the future of the clock is judged at the clock.
func TestStuckTerminatingClockCap(t *testing.T) {
	stuckAt(t, time.Date(2026, 11, 30, 9, 3, 0, 0, time.UTC))
	fs, _ := run(t, podsStuckTerminatingCheck(), "pods-stuck-terminating/gap.json", true)
	expect(t, fs, []want{{"Node", "", "node-d", "holds 1 pod stuck Terminating", finding.Low, caseBerkeley}})
	if want := "reference time (now: the input's newest timestamp is later than the clock): 2026-11-30T09:03:00Z"; fs[0].Evidence[0] != want {
		t.Errorf("evidence %q, want %q", fs[0].Evidence[0], want)
	}
}

// From files the same pods are reported, but silence about the rest is
// not a pass.
func TestStuckTerminatingFiles(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := loadFiles(t, "pods-stuck-terminating/clean.json")
	fs, ctx := runOn(t, podsStuckTerminatingCheck(), s)
	if len(fs) != 0 {
		t.Errorf("clean files: %d findings", len(fs))
	}
	// Both rules need Pods, which files never hold completely: the audit
	// marks them partial.
	if ctx.Complete(snapshot.Pods) {
		t.Error("files: pods complete")
	}
	fs, _ = runOn(t, podsStuckTerminatingCheck(), loadFiles(t, "pods-stuck-terminating/gap.json"))
	if len(fs) != 3 {
		t.Errorf("gap files: %d findings, want 3", len(fs))
	}
}

// Pods bound to a node that no longer exists are named as such when the
// node list is complete.
func TestStuckTerminatingNodeGone(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := checktest.Complete(checktest.Load(t, "pods-stuck-terminating/gap.json"))
	s.Nodes = slices.DeleteFunc(s.Nodes, func(n corev1.Node) bool { return n.Name == "node-b" })
	s.Finish() // rebuild the index over the shortened list
	fs, _ := runOn(t, podsStuckTerminatingCheck(), s)
	if !slices.ContainsFunc(fs, func(f finding.Finding) bool { return strings.Contains(f.Title, "node-b is gone") }) {
		t.Errorf("want node-b reported gone, got %d findings", len(fs))
	}
}

// Without any timestamp in the input the clock is the reference, and a
// pod deleted long before it is still found.
func TestStuckTerminatingNoTimestamps(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := checktest.Complete(checktest.Load(t, "pods-stuck-terminating/gap.json"))
	for i := range s.Nodes {
		s.Nodes[i].Status.Conditions = nil
	}
	for i := range s.Pods {
		s.Pods[i].CreationTimestamp = metav1.Time{}
	}
	fs, ctx := runOn(t, podsStuckTerminatingCheck(), s)
	if len(fs) != 4 || len(ctx.Notes()) != 0 {
		t.Errorf("no timestamps: %d findings (want node-a, node-b, node-c, node-d), notes %v", len(fs), ctx.Notes())
	}
	// The evidence calls the clock the clock, not a timestamp of the input.
	for _, f := range fs {
		if want := "reference time (now: the input holds no node heartbeat or pod creation time): 2026-12-01T00:00:00Z"; f.Evidence[0] != want {
			t.Errorf("evidence %q, want %q", f.Evidence[0], want)
		}
	}
}

// Pods that finalizers hold wait for their controller, not for the node:
// with the finalizers on node-a's three pods, the node is no longer
// suspected of a hung runtime (low, not high) and the evidence names them.
func TestStuckTerminatingFinalizers(t *testing.T) {
	stuckAt(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	s := checktest.Load(t, "pods-stuck-terminating/gap.json")
	checktest.Complete(s)
	held := 0
	for i := range s.Pods {
		if s.Pods[i].Spec.NodeName == "node-a" {
			s.Pods[i].Own()
			s.Pods[i].Finalizers = []string{"example.com/backup"}
			held++
		}
	}
	if held < stuckHigh {
		t.Fatalf("%d pods on node-a, want at least %d", held, stuckHigh)
	}
	fs, _, ok := checktest.Run(t, podsStuckTerminatingCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	for _, f := range fs {
		if f.Objects[0].Name != "node-a" {
			continue
		}
		if f.Severity != finding.Low {
			t.Errorf("node-a: %v %q, want low: finalizers, not the runtime, hold its pods", f.Severity, f.Title)
		}
		if !slices.ContainsFunc(f.Evidence, func(e string) bool { return strings.Contains(e, "held by finalizers example.com/backup") }) {
			t.Errorf("node-a's evidence does not name the finalizer: %v", f.Evidence)
		}
		return
	}
	t.Error("no finding for node-a")
}
