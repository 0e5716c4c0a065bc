package check

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// The scheduler's messages as releases wrote them (from kube-scheduler's
// node filter plugins and events quoted in public issues).
func TestParseSchedulerMessage(t *testing.T) {
	tests := []struct {
		msg      string
		nodes    int
		selector int
		taint    int
		short    int
		other    int
	}{
		// 1.22+, with the preemption tail.
		{"0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.", 7, 7, 0, 0, 0},
		// 1.26+ taint wording, mixed with the selector.
		{"0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/master: }, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 3 Preemption is not helpful for scheduling.", 3, 2, 1, 0, 0},
		// 1.20-1.25 taint wording, whose ", that" must not split the item.
		{"0/4 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) didn't match Pod's node affinity.", 4, 3, 1, 0, 0},
		// The predicates of 1.18 and before.
		{"0/3 nodes are available: 3 node(s) didn't match node selector.", 3, 3, 0, 0, 0},
		{"0/5 nodes are available: 2 node(s) had taints that the pod didn't tolerate, 3 Insufficient cpu.", 5, 0, 2, 3, 0},
		// Newest: taint(s), and a dynamic-resource tail.
		{"0/17 nodes are available: 17 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/17 nodes are available: 17 Preemption is not helpful for scheduling.", 17, 0, 17, 0, 0},
		{"0/6 nodes are available: 2 Insufficient memory, 3 Insufficient cpu, 1 node(s) were unschedulable.", 6, 0, 0, 5, 1},
	}
	for _, tt := range tests {
		n, fs, ok := ParseSchedulerMessage(tt.msg)
		if !ok || n != tt.nodes {
			t.Errorf("%q: nodes %d ok %v, want %d", tt.msg, n, ok, tt.nodes)
			continue
		}
		v := SchedulerVerdict{Nodes: n, Failures: fs}
		got := [4]int{v.Count(FailSelector), v.Count(FailTaint), v.Count(FailInsufficient), v.Count(FailOther)}
		if want := [4]int{tt.selector, tt.taint, tt.short, tt.other}; got != want {
			t.Errorf("%q: selector, taint, insufficient, other = %v, want %v (%+v)", tt.msg, got, want, fs)
		}
	}
	for _, msg := range []string{"no nodes available to schedule pods", "", "0/0 nodes are available: ", "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims."} {
		if _, _, ok := ParseSchedulerMessage(msg); ok {
			t.Errorf("%q parsed as a verdict", msg)
		}
	}
	_, fs, _ := ParseSchedulerMessage("0/4 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) had untolerated taint(s).")
	if len(fs) != 2 || fs[0].TaintKey != "node-role.kubernetes.io/master" || fs[1].TaintKey != "" {
		t.Errorf("taint keys: %+v", fs)
	}
	v := SchedulerVerdict{Nodes: 3, Failures: []NodeFailure{{Nodes: 2, Reason: FailSelector}, {Nodes: 1, Reason: FailTaint}}}
	if v.Every(FailSelector) || !v.Every(FailSelector, FailTaint) {
		t.Errorf("Every: %+v", v)
	}
}

// A verdict comes from the pod's condition, else its latest event; bound,
// running or missing pods get none.
func TestSchedulerVerdicts(t *testing.T) {
	pending := func(name string, cond string) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if cond != "" {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: cond}}
		}
		return p
	}
	ev := func(pod, msg string, at time.Time) corev1.Event {
		return corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: pod + at.String()}, Reason: "FailedScheduling",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: pod}, Message: msg, LastTimestamp: metav1.NewTime(at)}
	}
	selector := "0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector."
	short := "0/7 nodes are available: 7 Insufficient cpu."
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	running := pending("running", "")
	running.Spec.NodeName, running.Status.Phase = "n1", corev1.PodRunning
	s := snapshot.New(snapshot.Source{})
	_, add, _ := snapshot.ListKind(snapshot.Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{pending("by-condition", selector), pending("by-event", ""), running, pending("no-word", "")}})
	s.Events = []corev1.Event{ev("by-event", selector, t0), ev("by-event", short, t0.Add(time.Minute)),
		ev("running", selector, t0), ev("gone", selector, t0)}
	s.Finish()
	got := map[string]SchedulerVerdict{}
	for p, v := range SchedulerVerdicts(s) {
		got[p.Name] = v
	}
	if v, ok := got["by-condition"]; !ok || !v.Every(FailSelector) {
		t.Errorf("by-condition: %+v", v)
	}
	if v, ok := got["by-event"]; !ok || !v.Every(FailInsufficient) || v.From != "its latest FailedScheduling Event" {
		t.Errorf("by-event should take the latest event: %+v", v)
	}
	if len(got) != 2 {
		t.Errorf("verdicts for %v, want by-condition and by-event only", got)
	}
}
