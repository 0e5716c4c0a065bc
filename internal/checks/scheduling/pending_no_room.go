package scheduling

import (
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Rules and cases of pending-no-room.
const (
	ruleNoRoom = "no-room"
	// caseDFDSReserved: raising systemReserved on every node cut
	// allocatable capacity until customer pods sat Pending, ended by
	// adding nodes through the pipeline (detected: the lost room came
	// with the fix itself).
	caseDFDSReserved = "dfds-system-reserved-fix-leaves-workloads-pending-2025"
)

// pendingNoRoomCheck finds Pending pods that no node has room for, by the
// scheduler's own verdict, and says whether anything in the cluster could
// add a node.
func pendingNoRoomCheck() check.Check {
	return check.Check{
		ID:       "pending-no-room",
		Title:    "Pods Pending because no node has room for their requests",
		Severity: finding.High,
		Description: "Reads the scheduler's verdict on Pending pods (their PodScheduled=False/Unschedulable condition, " +
			"or their latest FailedScheduling event) and reports the workloads whose pods every node refused for lack of " +
			"allocatable CPU, memory or other resources (\"Insufficient cpu\"), the nodes not refused so being ones the " +
			"pod's node selection or taints rule out anyway. High when nothing the API shows can add a node " +
			"(no cluster-autoscaler Deployment, Karpenter NodePool or node, GKE or AKS node pool label): the pods wait " +
			"until someone adds nodes or lowers requests. Medium when an autoscaler is present, since it may be " +
			"adding a node now, or be at its pool's maximum. Verdicts that name other reasons (volumes, ports, " +
			"cordoned nodes) are left out.",
		Reads: append(check.Needs(snapshot.Pods), check.Optional(snapshot.Events), check.Optional(snapshot.Nodes),
			check.Optional(snapshot.Deployments), check.Optional(snapshot.ReplicaSets), check.Optional(snapshot.KarpenterNodePools)),
		Rules: []check.Rule{
			{ID: ruleNoRoom, Summary: "Pending pods that every node refused for lack of allocatable resources",
				Needs: []snapshot.Resource{snapshot.Pods}},
		},
		Cases: check.Detects(caseDFDSReserved),
		Run:   runPendingNoRoom,
	}
}

func runPendingNoRoom(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	vs := check.SchedulerVerdicts(s)
	if !ctx.Complete(snapshot.Events) {
		// A pod's verdict is its PodScheduled condition or, without one,
		// its latest FailedScheduling event: unread events leave such
		// pods unjudged.
		for i := range s.Pods {
			p := &s.Pods[i]
			if _, judged := vs[p]; !judged && p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "" {
				ctx.Incomplete(ruleNoRoom, "events were not read completely, and a Pending pod's scheduler verdict may be only in its FailedScheduling event (Pod %s/%s)", p.Namespace, p.Name)
				break
			}
		}
	}
	if len(vs) == 0 {
		return nil, nil
	}
	ix := s.Index()
	type group struct {
		ref      finding.ObjectRef
		verdicts []check.SchedulerVerdict
	}
	groups := map[string]*group{}
	var keys []string
	for i := range s.Pods {
		p := &s.Pods[i]
		v, ok := vs[p]
		if !ok || v.Count(check.FailInsufficient) == 0 || !v.Every(check.FailInsufficient, check.FailSelector, check.FailTaint) {
			continue
		}
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		if o, _, owned := ix.WorkloadVia(p); owned {
			if o.Kind == "DaemonSet" {
				continue // pinned to one node: a full node, not a full cluster
			}
			ref = finding.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: p.Namespace, Name: o.Name}
		}
		key := ref.String()
		g := groups[key]
		if g == nil {
			g = &group{ref: ref}
			groups[key] = g
			keys = append(keys, key)
		}
		g.verdicts = append(g.verdicts, v)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	sort.Strings(keys)
	if !ctx.Complete(snapshot.Deployments) || !ctx.Complete(snapshot.Nodes) || !ctx.Complete(snapshot.KarpenterNodePools) {
		// What adds nodes (a cluster-autoscaler Deployment, Karpenter, a
		// managed pool's labels) and the workload a pod belongs to are
		// read from these: without them the severity and the name may be
		// another's.
		ctx.Incomplete(ruleNoRoom, "Deployments, Nodes or Karpenter NodePools were not read completely: an autoscaler there would make this medium, and pods may be told under their ReplicaSet rather than their Deployment")
	}
	su := newScaleUp(ctx)
	adder := ""
	switch {
	case su.autoscaler != "":
		adder = "cluster-autoscaler (" + su.autoscaler + ")"
	case len(su.pools) > 0 || su.karpenterNodes:
		adder = "Karpenter"
	case su.managedPools != "":
		adder = su.managedPools
	}
	refs := check.NewCappedRefs()
	var ev []string
	var items []finding.EvidenceItem
	pods := 0
	for _, k := range keys {
		g := groups[k]
		refs.Add(g.ref)
		pods += len(g.verdicts)
		// The pending pods themselves, after their workloads: which
		// workload they are told under depends on what else was read (a
		// ReplicaSet without its Deployment), the pods do not.
		for _, v := range g.verdicts {
			refs.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: v.Pod.Namespace, Name: v.Pod.Name})
		}
		if len(ev) < check.MaxEvidence {
			ev = append(ev, g.verdicts[0].Evidence())
			p := g.verdicts[0].Pod
			items = append(items, finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				finding.Value("status.phase", "Pending")))
		}
	}
	f := finding.Finding{
		Check: "pending-no-room", Rule: ruleNoRoom, Severity: finding.High,
		Title: fmt.Sprintf("%s Pending: no node has room for %s requests",
			check.Plural(pods, "pod", "pods"), check.Plural(len(keys), "workload's", "workloads'")),
		Message: fmt.Sprintf("The scheduler refused %s of %s on every node it could use for lack of allocatable resources, "+
			"and nothing the API shows adds nodes: they wait until nodes are added or requests lowered. A change that "+
			"shrinks every node's allocatable (a larger systemReserved or kubeReserved, a new node image) does this to a "+
			"cluster that was near full.", check.Plural(pods, "pod", "pods"), check.Plural(len(keys), "workload", "workloads")),
		Objects:  refs.List(),
		Evidence: ev,
		Remediation: "Add nodes (or an autoscaler with room in its pools), or lower the pods' requests; compare the " +
			"cluster's requested CPU and memory with its allocatable total and alert before it is reached.",
		Cases: []string{caseDFDSReserved},
	}
	if adder != "" {
		f.Severity = finding.Medium
		f.Message = fmt.Sprintf("The scheduler refused %s of %s on every node it could use for lack of allocatable resources. "+
			"%s can add nodes: it may be doing so now, or its pools may be at their maximum.",
			check.Plural(pods, "pod", "pods"), check.Plural(len(keys), "workload", "workloads"), strings.ToUpper(adder[:1])+adder[1:])
	}
	f.AddEvidence(items...)
	return []finding.Finding{f}, nil
}
