package availability

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	stuckID        = "pods-stuck-terminating"
	ruleStuckReady = "ready-node"
	ruleStuckDown  = "not-ready-node"
	caseBerkeley   = "berkeley-datahub-docker-hung-nodes-pods-stuck-terminating-2017"
	// stuckMargin is how long past its deletionTimestamp a pod must still
	// exist to count as stuck. The API server sets deletionTimestamp to the
	// moment of the delete plus the grace period, after which the kubelet
	// kills the containers and removes the pod
	// (https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/object-meta/):
	// the margin is our policy, wide enough for a slow kubelet.
	stuckMargin = 5 * time.Minute
	// stuckHigh pods stuck on one Ready node, none held by a finalizer,
	// point at the node rather than at a controller: our threshold.
	stuckHigh = 3
)

// stuckNow is the clock, replaced in tests.
var stuckNow = time.Now

func podsStuckTerminatingCheck() check.Check {
	return check.Check{
		ID:       stuckID,
		Title:    "Pods stuck Terminating long past their grace period, grouped by node",
		Severity: finding.High,
		Description: "When a pod is deleted the API server sets its deletionTimestamp to the time of the delete plus " +
			"its grace period; the kubelet then stops the containers and removes the pod. A pod still present " +
			"more than 5 minutes after that time is stuck. Several stuck pods on one node that still reports " +
			"Ready point at the node, not the pods: a hung container runtime leaves the node schedulable while " +
			"the kubelet can neither start nor stop containers, so new pods keep landing there and fail. High " +
			"when a Ready node holds 3 or more such pods, low for 1 or 2 (a finalizer held by a controller can " +
			"also keep one pod; kubegap does not keep pod finalizers). Medium for a NotReady node holding stuck " +
			"pods: they stay until the node returns or is deleted, and StatefulSet replacements wait for them. " +
			"The reference time is the newest timestamp in the snapshot (node heartbeats, pod creation), never " +
			"later than now (now when there is none), so an old snapshot file is judged as of when it was taken.",
		Reads: check.Needs(snapshot.Pods, snapshot.Nodes),
		Rules: []check.Rule{
			{ID: ruleStuckReady, Summary: "Ready nodes holding pods stuck Terminating past their grace period", Needs: []snapshot.Resource{snapshot.Pods, snapshot.Nodes}},
			{ID: ruleStuckDown, Summary: "NotReady nodes holding pods stuck Terminating", Needs: []snapshot.Resource{snapshot.Pods, snapshot.Nodes}},
		},
		Cases: check.Detects(caseBerkeley),
		Run:   runPodsStuckTerminating,
	}
}

// referenceTime is the newest moment the snapshot shows, so that a file
// read days later is judged as of when it was taken: node condition
// heartbeats and pod creation times, capped at now; now when the input
// carries no timestamp at all. basis says which of the three it is, for
// the evidence.
func referenceTime(s *snapshot.Snapshot) (ref time.Time, basis string) {
	for i := range s.Nodes {
		for _, c := range s.Nodes[i].Status.Conditions {
			if c.LastHeartbeatTime.After(ref) {
				ref = c.LastHeartbeatTime.Time
			}
		}
	}
	for i := range s.Pods {
		if t := s.Pods[i].CreationTimestamp.Time; t.After(ref) {
			ref = t
		}
	}
	now := stuckNow()
	switch {
	case ref.IsZero():
		return now, "now: the input holds no node heartbeat or pod creation time"
	case ref.After(now):
		return now, "now: the input's newest timestamp is later than the clock"
	}
	return ref, "newest timestamp in the input"
}

func runPodsStuckTerminating(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	ref, basis := referenceTime(s)
	byNode := map[string][]*snapshot.Pod{}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.DeletionTimestamp == nil || p.Spec.NodeName == "" || !ref.After(p.DeletionTimestamp.Add(stuckMargin)) {
			continue
		}
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	names := make([]string, 0, len(byNode))
	for n := range byNode {
		names = append(names, n)
	}
	sort.Strings(names)
	ix := s.Index()
	out := make([]finding.Finding, 0, len(names))
	for _, n := range names {
		out = append(out, stuckFinding(n, ix.Node(n), ctx.Complete(snapshot.Nodes), byNode[n], ref, basis))
	}
	return out, nil
}

// stuckFinding reports the stuck pods of one node; nodesComplete says
// whether a node missing from the input is gone rather than unknown.
func stuckFinding(node string, n *corev1.Node, nodesComplete bool, pods []*snapshot.Pod, ref time.Time, basis string) finding.Finding {
	sort.Slice(pods, func(i, j int) bool { return pods[i].DeletionTimestamp.Before(pods[j].DeletionTimestamp) })
	oldest := ref.Sub(pods[0].DeletionTimestamp.Time).Round(time.Minute)
	f := finding.Finding{Check: stuckID, Objects: []finding.ObjectRef{check.NodeRef(node)}, Cases: []string{caseBerkeley}}
	for i, p := range pods {
		if i == check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name})
	}
	count := check.Plural(len(pods), "pod", "pods")
	ready := check.NodeReady(n)
	// A pod a finalizer holds waits for its controller, not for the node:
	// only the others point at the node's runtime.
	unheld := 0
	for _, p := range pods {
		if len(p.Finalizers) == 0 {
			unheld++
		}
	}
	switch {
	case ready == corev1.ConditionTrue && unheld >= stuckHigh:
		f.Severity = finding.High
		f.Title = fmt.Sprintf("Node %s reports Ready but holds %s stuck Terminating", node, count)
		f.Message = fmt.Sprintf("%s on node %s are still present up to %s after their grace period ended, while the node "+
			"reports Ready and stays schedulable: the kubelet is not removing containers there, as when the container "+
			"runtime hangs, and pods newly placed on it will not start.", count, node, oldest)
		f.Remediation = fmt.Sprintf("Cordon the node (kubectl cordon %s), check its container runtime (crictl ps, the runtime's "+
			"log), drain and restart it; force-delete the stuck pods only once their containers are known to be gone.", node)
	case ready == corev1.ConditionTrue:
		f.Severity = finding.Low
		f.Title = fmt.Sprintf("Node %s holds %s stuck Terminating", node, count)
		f.Message = fmt.Sprintf("%s on Ready node %s are still present up to %s after their grace period ended: "+
			"a finalizer or a container that will not stop holds them; several on one node point at the node's runtime.",
			count, node, oldest)
		f.Remediation = "Look at the pods' finalizers and events (kubectl describe pod) and at the node's container runtime."
	default:
		state := "NotReady (Ready " + string(ready) + ")"
		switch {
		case n == nil && nodesComplete:
			state = "gone (no such Node object)"
		case ready == "":
			state = "of unknown readiness (not in the input)"
		}
		f.Severity = finding.Medium
		f.Title = fmt.Sprintf("Node %s is %s and holds %s stuck Terminating", node, state, count)
		f.Message = fmt.Sprintf("%s on node %s (%s) are still present up to %s after their grace period ended: "+
			"nothing removes them until the node's kubelet returns or the Node object is deleted, and a StatefulSet "+
			"does not replace a pod whose predecessor still exists.", count, node, state, oldest)
		f.Remediation = fmt.Sprintf("Restore node %s, or, once it is known to be down for good, delete the Node object "+
			"so its pods are removed; force-delete a StatefulSet pod only when its containers are certainly stopped.", node)
	}
	f.Evidence = stuckEvidence(pods, ref, basis)
	for i, p := range pods {
		if i == check.MaxEvidence {
			break
		}
		f.AddEvidence(finding.Quote(podRef(p), finding.Value("status.phase", p.Status.Phase),
			finding.Value("metadata.deletionTimestamp", p.DeletionTimestamp.UTC().Format(time.RFC3339))))
	}
	return f
}

func stuckEvidence(pods []*snapshot.Pod, ref time.Time, basis string) []string {
	ev := []string{"reference time (" + basis + "): " + ref.UTC().Format(time.RFC3339)}
	for i, p := range pods {
		if i == check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("and %d more", len(pods)-i))
			break
		}
		line := fmt.Sprintf("pod %s/%s: deleted %s ago", p.Namespace, p.Name, ref.Sub(p.DeletionTimestamp.Time).Round(time.Minute))
		if len(p.Finalizers) > 0 {
			line += ", held by finalizers " + strings.Join(p.Finalizers, ", ")
		}
		ev = append(ev, line)
	}
	return ev
}
