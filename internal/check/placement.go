package check

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Placement predicts which nodes a pod template can land on from what the
// snapshot holds: nodeSelector, required node affinity and taints against
// tolerations. It ignores resources and ports: a DaemonSet that does not
// fit on a node still targets it, and the question node-counting checks
// ask is "what would run here", not "what runs here now". It is compiled
// once per template, then matched against each node. Every check that
// counts the nodes a template runs on uses it, so that a GPU-only
// DaemonSet is counted on the GPU nodes, not on all of them.
//
// k8s.io/component-helpers/scheduling/corev1/nodeaffinity does the same for
// the scheduler, but it is not in kubegap's module graph; the semantics here
// follow it: terms are ORed, expressions within a term ANDed, an empty or
// invalid term matches nothing.
type Placement struct {
	selector    labels.Selector // nodeSelector; nil when none
	terms       []nodeTerm      // required node affinity; nil when none
	hasAffinity bool
	tolerations []corev1.Toleration
}

type nodeTerm struct {
	labels labels.Selector // nil when the term has no matchExpressions
	names  []nameRule      // matchFields on metadata.name
	valid  bool
}

type nameRule struct {
	in     bool
	values map[string]bool
}

// daemonSetTolerations are the tolerations the DaemonSet controller adds to
// every daemon pod, so that daemons keep running on cordoned, not-ready and
// pressured nodes (pkg/controller/daemon/util in kubernetes).
func daemonSetTolerations(hostNetwork bool) []corev1.Toleration {
	t := []corev1.Toleration{
		{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
		{Key: "node.kubernetes.io/disk-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/memory-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/pid-pressure", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/unschedulable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	}
	if hostNetwork {
		t = append(t, corev1.Toleration{Key: "node.kubernetes.io/network-unavailable",
			Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return t
}

// DaemonSetPlacement compiles where a DaemonSet's pods go, the DaemonSet
// controller's own tolerations included.
func DaemonSetPlacement(ds *appsv1.DaemonSet) Placement {
	spec := &ds.Spec.Template.Spec
	return PodSpecPlacement(spec, daemonSetTolerations(spec.HostNetwork)...)
}

// PodSpecPlacement compiles where pods of spec go; extra tolerations are
// those a controller adds to the pods it creates.
func PodSpecPlacement(spec *corev1.PodSpec, extra ...corev1.Toleration) Placement {
	p := Placement{tolerations: append(append([]corev1.Toleration{}, spec.Tolerations...), extra...)}
	if len(spec.NodeSelector) > 0 {
		p.selector = labels.SelectorFromSet(spec.NodeSelector)
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		p.hasAffinity = true
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			p.terms = append(p.terms, compileTerm(t))
		}
	}
	return p
}

// Restricted reports whether the template names any node selection at
// all (a nodeSelector or required node affinity), taints aside.
func (p *Placement) Restricted() bool { return p.selector != nil || p.hasAffinity }

func compileTerm(t corev1.NodeSelectorTerm) nodeTerm {
	nt := nodeTerm{valid: len(t.MatchExpressions) > 0 || len(t.MatchFields) > 0}
	if len(t.MatchExpressions) > 0 {
		sel := labels.NewSelector()
		for _, e := range t.MatchExpressions {
			r, err := nodeRequirement(e)
			if err != nil {
				return nodeTerm{}
			}
			sel = sel.Add(*r)
		}
		nt.labels = sel
	}
	for _, f := range t.MatchFields {
		if f.Key != "metadata.name" {
			return nodeTerm{}
		}
		rule := nameRule{values: map[string]bool{}}
		switch f.Operator {
		case corev1.NodeSelectorOpIn:
			rule.in = true
		case corev1.NodeSelectorOpNotIn:
		default:
			return nodeTerm{}
		}
		for _, v := range f.Values {
			rule.values[v] = true
		}
		nt.names = append(nt.names, rule)
	}
	return nt
}

func nodeRequirement(e corev1.NodeSelectorRequirement) (*labels.Requirement, error) {
	var op selection.Operator
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		op = selection.In
	case corev1.NodeSelectorOpNotIn:
		op = selection.NotIn
	case corev1.NodeSelectorOpExists:
		op = selection.Exists
	case corev1.NodeSelectorOpDoesNotExist:
		op = selection.DoesNotExist
	case corev1.NodeSelectorOpGt:
		op = selection.GreaterThan
	case corev1.NodeSelectorOpLt:
		op = selection.LessThan
	default:
		return nil, fmt.Errorf("unknown node selector operator %q", e.Operator)
	}
	return labels.NewRequirement(e.Key, op, e.Values)
}

// Matches reports whether the pods can land on node.
func (p *Placement) Matches(node *corev1.Node) bool {
	if !p.MatchesSelection(node) {
		return false
	}
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !tolerated(p.tolerations, taint) {
			return false
		}
	}
	return true
}

// MatchesSelection reports whether node's labels and name satisfy the
// template's nodeSelector and required node affinity, taints aside: for
// checks about couplings of workloads that commonly tolerate every taint.
func (p *Placement) MatchesSelection(node *corev1.Node) bool {
	set := labels.Set(node.Labels)
	if p.selector != nil && !p.selector.Matches(set) {
		return false
	}
	return !p.hasAffinity || p.matchesAffinity(node, set)
}

// Nodes returns the nodes the pods can land on.
func (p *Placement) Nodes(nodes []corev1.Node) []*corev1.Node {
	var out []*corev1.Node
	for i := range nodes {
		if p.Matches(&nodes[i]) {
			out = append(out, &nodes[i])
		}
	}
	return out
}

func (p *Placement) matchesAffinity(node *corev1.Node, set labels.Set) bool {
	for _, t := range p.terms {
		if !t.valid {
			continue
		}
		if t.labels != nil && !t.labels.Matches(set) {
			continue
		}
		ok := true
		for _, r := range t.names {
			if r.values[node.Name] != r.in {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func tolerated(ts []corev1.Toleration, taint *corev1.Taint) bool {
	for i := range ts {
		if tolerates(&ts[i], taint) {
			return true
		}
	}
	return false
}

// tolerates follows corev1.Toleration.ToleratesTaint, without its logger.
func tolerates(t *corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return t.Value == taint.Value
	case corev1.TolerationOpGt, corev1.TolerationOpLt:
		tv, err1 := strconv.ParseInt(t.Value, 10, 64)
		nv, err2 := strconv.ParseInt(taint.Value, 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if t.Operator == corev1.TolerationOpGt {
			return nv > tv
		}
		return nv < tv
	}
	return false
}
