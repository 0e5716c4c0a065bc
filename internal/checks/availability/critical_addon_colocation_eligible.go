package availability

// critical-addon-colocation: the nodes a template's pods may run on (taints
// tolerated, nodeSelector and required node affinity matched), which tell pods
// that cannot be spread (low) from pods that can.

import (
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// eligibleNodes names the schedulable nodes a pod of spec may be scheduled
// on by what the input shows: every NoSchedule and NoExecute taint
// tolerated, the nodeSelector matched and, where the template has required
// node affinity, a term matched. An expression it cannot judge (Gt, Lt,
// matchFields) counts as a match, so that doubt keeps the node eligible
// and the finding as it was.
func eligibleNodes(s *snapshot.Snapshot, spec *corev1.PodSpec) []string {
	var out []string
	nodeSelector := labels.SelectorFromSet(spec.NodeSelector) // once, not per node
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Spec.Unschedulable || !tolerated(n.Spec.Taints, spec.Tolerations) ||
			!nodeSelector.Matches(labels.Set(n.Labels)) || !requiredAffinityMatches(spec, n) {
			continue
		}
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}

// conditionTaints are the taints the node lifecycle sets from a node's
// conditions (TaintNodesByCondition and taint-based evictions, see
// https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/#taint-nodes-by-condition):
// they say how a node is now, not where a template may run, so they do not
// make a node ineligible for spreading. A node that is not ready is judged
// by the readiness of the pods on it instead.
var conditionTaints = map[string]bool{
	"node.kubernetes.io/not-ready":           true,
	"node.kubernetes.io/unreachable":         true,
	"node.kubernetes.io/memory-pressure":     true,
	"node.kubernetes.io/disk-pressure":       true,
	"node.kubernetes.io/pid-pressure":        true,
	"node.kubernetes.io/network-unavailable": true,
}

func tolerated(taints []corev1.Taint, tols []corev1.Toleration) bool {
	for i := range taints {
		t := &taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule || conditionTaints[t.Key] {
			continue
		}
		ok := false
		for j := range tols {
			if tolerates(&tols[j], t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// tolerates is the API's toleration matching (an empty key with Exists
// matches every taint, an empty effect every effect; Equal compares the
// value). corev1.Toleration.ToleratesTaint does the same but wants a
// logger and a feature gate.
func tolerates(tol *corev1.Toleration, t *corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != t.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != t.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Key != "" && tol.Value == t.Value
	}
	return false
}

func requiredAffinityMatches(spec *corev1.PodSpec, n *corev1.Node) bool {
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		if len(term.MatchFields) > 0 {
			return true // not judged: keep the node
		}
		if len(term.MatchExpressions) == 0 {
			continue // an empty term matches nothing
		}
		matched := true
		for _, e := range term.MatchExpressions {
			v, has := n.Labels[e.Key]
			switch e.Operator {
			case corev1.NodeSelectorOpIn:
				matched = matched && has && slices.Contains(e.Values, v)
			case corev1.NodeSelectorOpNotIn:
				matched = matched && !(has && slices.Contains(e.Values, v))
			case corev1.NodeSelectorOpExists:
				matched = matched && has
			case corev1.NodeSelectorOpDoesNotExist:
				matched = matched && !has
			}
		}
		if matched {
			return true
		}
	}
	return false
}

// eligibleText says which nodes admit the pods.
func eligibleText(nodes []string) string {
	switch len(nodes) {
	case 0:
		return "none admits them now (the pods run where they were placed before)"
	case 1:
		return "only " + nodes[0] + " admits them"
	}
	return strings.Join(nodes, ", ") + " admit them"
}
