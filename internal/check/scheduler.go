package check

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// What kube-scheduler wrote about a pod it could not place. Its verdict
// (the PodScheduled=False condition's message, the same text as its
// FailedScheduling events) names, for every node it knew, the first
// filter that node failed: "0/7 nodes are available: 7 node(s) didn't
// match Pod's node affinity/selector." When every node fails on the pod's
// node selection or on taints, no node the scheduler knew could host the
// pod, whatever the input holds of the Node list.

// FailReason is what a group of nodes failed on, as the scheduler's
// message names it.
type FailReason int

// The reasons a verdict distinguishes.
const (
	// FailOther is any reason kubegap does not classify (ports, volumes,
	// pod affinity, unschedulable nodes, ...).
	FailOther FailReason = iota
	// FailSelector: the node does not match the pod's nodeSelector or
	// required node affinity.
	FailSelector
	// FailTaint: the node has a NoSchedule/NoExecute taint the pod does
	// not tolerate.
	FailTaint
	// FailInsufficient: the node lacks allocatable room for the pod's
	// requests ("Insufficient cpu").
	FailInsufficient
)

// schedulerReasons are the reason texts of kube-scheduler's node filters
// across versions, by what they mean. Sources: the NodeAffinity plugin's
// ErrReasonPod ("node(s) didn't match Pod's node affinity/selector", and
// "node(s) didn't match Pod's node affinity" in the releases before it),
// the predicates' ErrNodeSelectorNotMatch ("node(s) didn't match node
// selector", before the scheduling framework), the TaintToleration
// plugin ("node(s) had taints that the pod didn't tolerate", then
// "node(s) had taint {key: value}, that the pod didn't tolerate", then
// "node(s) had untolerated taint {key: value}" and "node(s) had
// untolerated taint(s)"), and NodeResourcesFit ("Insufficient cpu").
// https://github.com/kubernetes/kubernetes/tree/master/pkg/scheduler/framework/plugins
var schedulerReasons = []struct {
	prefix string
	reason FailReason
}{
	{"node(s) didn't match Pod's node affinity", FailSelector},
	{"node(s) didn't match node selector", FailSelector},
	{"node(s) had untolerated taint", FailTaint},
	{"node(s) had taint", FailTaint},
	{"node(s) had taints that the pod didn't tolerate", FailTaint},
	{"Insufficient ", FailInsufficient},
}

// NodeFailure is one group of nodes in a verdict: how many, and why.
type NodeFailure struct {
	Nodes  int
	Text   string
	Reason FailReason
	// TaintKey is the taint's key when the scheduler named it ("had
	// untolerated taint {dedicated: payments}"); "" when it did not.
	TaintKey string
}

// SchedulerVerdict is what the scheduler last said about one pod it could
// not place.
type SchedulerVerdict struct {
	Pod *snapshot.Pod
	// Nodes is N of "0/N nodes are available": how many nodes the
	// scheduler knew.
	Nodes    int
	Failures []NodeFailure
	// Message is the scheduler's text, as written.
	Message string
	// From says where the message was read: the pod's PodScheduled
	// condition or a FailedScheduling event.
	From string
}

// Every reports whether every node the scheduler knew failed for one of
// the reasons given.
func (v SchedulerVerdict) Every(reasons ...FailReason) bool {
	if v.Nodes == 0 {
		return false
	}
	n := 0
	for _, f := range v.Failures {
		for _, r := range reasons {
			if f.Reason == r {
				n += f.Nodes
				break
			}
		}
	}
	return n >= v.Nodes
}

// Count is how many nodes failed for reason r.
func (v SchedulerVerdict) Count(r FailReason) int {
	n := 0
	for _, f := range v.Failures {
		if f.Reason == r {
			n += f.Nodes
		}
	}
	return n
}

// Evidence is the verdict as one evidence line.
func (v SchedulerVerdict) Evidence() string {
	return fmt.Sprintf("Pod %s/%s is Pending; the scheduler (%s): %q", v.Pod.Namespace, v.Pod.Name, v.From, v.Message)
}

var verdictHead = regexp.MustCompile(`^0/(\d+) nodes are available: `)

// ParseSchedulerMessage reads "0/N nodes are available: a reason, b
// reason." with an optional " preemption: ..." tail, as kube-scheduler
// writes it. ok is false for any other text, such as "no nodes available
// to schedule pods".
func ParseSchedulerMessage(msg string) (nodes int, failures []NodeFailure, ok bool) {
	m := verdictHead.FindStringSubmatch(msg)
	if m == nil {
		return 0, nil, false
	}
	nodes, err := strconv.Atoi(m[1])
	if err != nil || nodes == 0 {
		return 0, nil, false
	}
	body := msg[len(m[0]):]
	if i := strings.Index(body, " preemption:"); i >= 0 {
		body = body[:i]
	}
	// The list ends at its full stop; what follows (preemption, dynamic
	// resource claims) is about other remedies.
	if i := strings.Index(body, ". "); i >= 0 {
		body = body[:i]
	}
	body = strings.TrimRight(strings.TrimSpace(body), ".")
	// Items are "<count> <reason>" joined by ", "; a reason may itself hold
	// ", " ("had taint {k: v}, that the pod didn't tolerate"), so a piece
	// that does not start with a count continues the one before.
	for _, piece := range strings.Split(body, ", ") {
		count, text, found := strings.Cut(piece, " ")
		n, err := strconv.Atoi(count)
		if !found || err != nil {
			if len(failures) == 0 {
				return 0, nil, false
			}
			failures[len(failures)-1].Text += ", " + piece
			continue
		}
		failures = append(failures, NodeFailure{Nodes: n, Text: text})
	}
	for i := range failures {
		failures[i].Reason = FailOther
		for _, r := range schedulerReasons {
			if strings.HasPrefix(failures[i].Text, r.prefix) {
				failures[i].Reason = r.reason
				break
			}
		}
		if failures[i].Reason == FailTaint {
			if _, rest, ok := strings.Cut(failures[i].Text, "{"); ok {
				if key, _, ok := strings.Cut(rest, ":"); ok {
					failures[i].TaintKey = strings.TrimSpace(key)
				}
			}
		}
	}
	return nodes, failures, len(failures) > 0
}

// SchedulerVerdicts returns the scheduler's verdict on every pod of the
// input that is still Pending and unbound: the message of its
// PodScheduled=False condition with reason Unschedulable, else that of
// its latest FailedScheduling event. A pod the input does not hold gets
// none, since it may have been placed after its events were written.
func SchedulerVerdicts(s *snapshot.Snapshot) map[*snapshot.Pod]SchedulerVerdict {
	type event struct {
		msg string
		at  time.Time
	}
	latest := map[[3]string]event{} // namespace, name, uid
	for i := range s.Events {
		e := &s.Events[i]
		if e.Reason != "FailedScheduling" || e.InvolvedObject.Kind != "Pod" {
			continue
		}
		at := e.LastTimestamp.Time
		if e.EventTime.After(at) {
			at = e.EventTime.Time
		}
		if e.Series != nil && e.Series.LastObservedTime.After(at) {
			at = e.Series.LastObservedTime.Time
		}
		key := [3]string{e.InvolvedObject.Namespace, e.InvolvedObject.Name, string(e.InvolvedObject.UID)}
		if old, seen := latest[key]; !seen || !at.Before(old.at) {
			latest[key] = event{e.Message, at}
		}
	}
	out := map[*snapshot.Pod]SchedulerVerdict{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName != "" || p.DeletionTimestamp != nil || (p.Status.Phase != "" && p.Status.Phase != corev1.PodPending) {
			continue
		}
		var msg, from string
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && c.Message != "" {
				msg, from = c.Message, "its PodScheduled condition, reason Unschedulable"
			}
		}
		if msg == "" {
			e, ok := latest[[3]string{p.Namespace, p.Name, p.UID.String()}]
			if !ok && !p.UID.IsZero() {
				e, ok = latest[[3]string{p.Namespace, p.Name, ""}]
			}
			if !ok {
				continue
			}
			msg, from = e.msg, "its latest FailedScheduling Event"
		}
		n, fs, ok := ParseSchedulerMessage(msg)
		if !ok {
			continue
		}
		out[p] = SchedulerVerdict{Pod: p, Nodes: n, Failures: fs, Message: msg, From: from}
	}
	return out
}
