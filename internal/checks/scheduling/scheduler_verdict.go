package scheduling

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The scheduler's own verdict on Pending pods proves what the Node list
// cannot when it is incomplete: "0/7 nodes are available: 7 node(s)
// didn't match Pod's node affinity/selector" means no node the scheduler
// knew matches (see check.SchedulerVerdicts).

// verdictGroup is the Pending pods of one workload (or one pod without a
// controller) that the scheduler could place on no node.
type verdictGroup struct {
	ref      finding.ObjectRef
	kind     string
	verdicts []check.SchedulerVerdict
	via      string
}

func (g *verdictGroup) String() string { return g.ref.Kind + " " + g.ref.Namespace + "/" + g.ref.Name }

// placementVerdicts groups by workload the verdicts in which every node
// failed on the pod's node selection or on taints it does not tolerate:
// no node the scheduler knew could take the pod, whatever its capacity.
// DaemonSet pods are left out: each is pinned to one node by name, and
// a verdict on it speaks of that node, not of the template.
func placementVerdicts(s *snapshot.Snapshot) map[string]*verdictGroup {
	vs := check.SchedulerVerdicts(s)
	if len(vs) == 0 {
		return nil
	}
	ix := s.Index()
	out := map[string]*verdictGroup{}
	for i := range s.Pods { // in the snapshot's order, so evidence is stable
		p := &s.Pods[i]
		v, ok := vs[p]
		if !ok || !placementOnly(v) {
			continue
		}
		ref := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		o, via, owned := ix.WorkloadVia(p)
		if owned {
			if o.Kind == "DaemonSet" {
				continue
			}
			ref = finding.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: p.Namespace, Name: o.Name}
		}
		key := ref.Kind + "/" + ref.Namespace + "/" + ref.Name
		g := out[key]
		if g == nil {
			g = &verdictGroup{ref: ref, kind: ref.Kind, via: via}
			out[key] = g
		}
		g.verdicts = append(g.verdicts, v)
	}
	return out
}

// placementOnly reports whether every node of v failed the pod's node
// selection or carried a taint the scheduler named that is a placement
// taint: condition taints (node.kubernetes.io/not-ready, the cloud
// provider's uninitialized, the autoscaler's) come and go, and a taint the
// message does not name ("had untolerated taint(s)") may be one of them.
func placementOnly(v check.SchedulerVerdict) bool {
	n := 0
	for _, f := range v.Failures {
		switch {
		case f.Reason == check.FailSelector:
			n += f.Nodes
		case f.Reason == check.FailTaint && f.TaintKey != "" && !conditionTaint(corev1.Taint{Key: f.TaintKey}):
			n += f.Nodes
		}
	}
	return v.Nodes > 0 && n >= v.Nodes
}

// verdictFinding reports one workload's pods the scheduler placed nowhere.
// w is its template when the input holds it (nil otherwise); sel its node
// selection.
func (r *selectorRun) verdictFinding(g *verdictGroup, w *workload, sel selection, hasSel bool) finding.Finding {
	v := g.verdicts[0]
	onSelector := v.Every(check.FailSelector)
	f := finding.Finding{
		Check:   "selector-matches-no-node",
		Objects: []finding.ObjectRef{g.ref},
		Cases:   []string{caseReddit, caseDell},
	}
	for _, pv := range g.verdicts {
		if len(f.Objects) > check.MaxListedObjects {
			break
		}
		if g.ref.Kind != "Pod" {
			f.Objects = append(f.Objects, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: pv.Pod.Namespace, Name: pv.Pod.Name})
		}
	}
	pods := check.Plural(len(g.verdicts), "pod", "pods")
	if onSelector {
		f.Title = fmt.Sprintf("The scheduler finds no node matching %s", g)
		f.Message = fmt.Sprintf("kube-scheduler could place %s of %s on none of the %d nodes it knows: every one fails the "+
			"pods' nodeSelector or required node affinity, so they stay Pending. This is the scheduler's own verdict, "+
			"written on the pods, and holds whatever the input lacks of the Node list.", pods, g, v.Nodes)
	} else {
		f.Title = fmt.Sprintf("The scheduler finds no node that both matches and accepts %s", g)
		f.Message = fmt.Sprintf("kube-scheduler could place %s of %s on none of the %d nodes it knows: %d carry a taint the "+
			"pods do not tolerate and the other %d do not match their node selection, so they stay Pending. This is the "+
			"scheduler's own verdict, written on the pods, and holds whatever the input lacks of the Node list.",
			pods, g, v.Nodes, v.Count(check.FailTaint), v.Nodes-v.Count(check.FailTaint))
		f.Cases = []string{caseDell}
	}
	f.Evidence = append(f.Evidence, v.Evidence())
	// Where the scheduler's words were read, quoted.
	if it, ok := r.verdictSource(v); ok {
		f.AddEvidence(it)
	}
	if len(g.verdicts) > 1 {
		var names []string
		for _, o := range g.verdicts[1:] {
			names = append(names, o.Pod.Name)
		}
		f.Evidence = append(f.Evidence, fmt.Sprintf("also Pending with the same kind of verdict: %s", check.ListText(names, 10)))
	}
	if g.via != "" {
		f.Evidence = append(f.Evidence, "pods tied to "+g.String()+": "+g.via)
	}
	// The pods: not placed, and what ties them to the workload (their
	// controller and pod-template-hash), grouped.
	var pending finding.Grouper
	for _, pv := range g.verdicts {
		p := pv.Pod
		fields := []finding.Field{finding.Value("status.phase", string(p.Status.Phase)), finding.Absent("spec.nodeName")}
		fields = append(fields, check.ControllerFields(p.OwnerReferences)...)
		if h := p.Labels["pod-template-hash"]; h != "" {
			fields = append(fields, finding.Value("metadata.labels[pod-template-hash]", h))
		}
		pending.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, fields...)
	}
	f.AddEvidence(pending.Items()...)
	how := ""
	if w != nil && hasSel {
		for ti, t := range sel.terms {
			prefix := "the template requires"
			if len(sel.terms) > 1 {
				prefix = fmt.Sprintf("term %d of %d of the template requires", ti+1, len(sel.terms))
			}
			f.Evidence = append(f.Evidence, prefix+" "+t.String())
		}
		if sel.noTerms {
			f.Evidence = append(f.Evidence, "the template's required node affinity has no non-empty nodeSelectorTerms, which matches no node")
		}
		if it, ok := selectionItem(*w); ok {
			f.AddEvidence(it)
		}
		how = r.su.couldCreate(sel)
	}
	switch {
	case !onSelector:
		f.Severity = finding.Medium
	case how == "" && w != nil:
		f.Severity = finding.High
	case how == "":
		// The template is not in the input: what the pods ask for is known
		// only from the scheduler's words.
		f.Severity = finding.Medium
	case strings.HasPrefix(how, "Karpenter NodePool"):
		f.Severity = finding.Low
		f.Message += " " + how + ", so a node may be on its way."
	default:
		f.Severity = finding.Medium
		f.Message += " However, " + how + "."
	}
	if how != "" {
		f.Evidence = append(f.Evidence, how)
	}
	f.Remediation = "Compare the pods' nodeSelector, required node affinity and tolerations with the labels and taints of the " +
		"nodes meant to run them (kubectl get nodes --show-labels; kubectl describe pod -n " + g.ref.Namespace + " " + v.Pod.Name +
		"), then fix the template or label the nodes."
	return f
}

// verdictFindings turns the verdict groups into findings, skipping the
// workloads whose template the run judged already (found) and those whose
// template matches a node of the input that accepts it: its pods may be
// of an older template, and the current one can be placed.
func (r *selectorRun) verdictFindings(groups map[string]*verdictGroup, templates map[string]workload, found map[string]bool) []finding.Finding {
	var out []finding.Finding
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if found[key] {
			continue
		}
		g := groups[key]
		var wp *workload
		var sel selection
		var hasSel bool
		if w, ok := templates[key]; ok {
			wp = &w
			sel, hasSel = selectionOf(w.spec)
			if !hasSel {
				continue // the template asks nothing of its nodes now
			}
			if nodes := r.matching(sel); len(nodes) > 0 && !r.allRepel(w, nodes) {
				continue
			}
		}
		out = append(out, r.verdictFinding(g, wp, sel, hasSel))
	}
	return out
}

// allRepel reports whether every one of nodes carries a NoSchedule or
// NoExecute taint w does not tolerate.
func (r *selectorRun) allRepel(w workload, nodes []int) bool {
	for _, i := range nodes {
		if !r.repels(w, i) {
			return false
		}
	}
	return true
}

// verdictSource quotes where v's message was read: the pod's PodScheduled
// condition, or the latest FailedScheduling Event of the pod whose message
// it is.
func (r *selectorRun) verdictSource(v check.SchedulerVerdict) (finding.EvidenceItem, bool) {
	p := v.Pod
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Message == v.Message {
			const cond = "status.conditions[type=PodScheduled]."
			return finding.Quote(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
				finding.Value(cond+"status", string(c.Status)), finding.Value(cond+"reason", c.Reason),
				finding.Value(cond+"message", c.Message)), true
		}
	}
	evs := r.ctx.Snapshot.Events
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Reason == "FailedScheduling" && e.InvolvedObject.Namespace == p.Namespace && e.InvolvedObject.Name == p.Name &&
			e.Message == v.Message {
			return finding.Quote(check.Ref("v1", "Event", e), finding.Value("involvedObject.name", e.InvolvedObject.Name),
				finding.Value("reason", e.Reason), finding.Value("message", e.Message)), true
		}
	}
	return finding.EvidenceItem{}, false
}
