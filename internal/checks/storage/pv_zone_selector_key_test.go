package storage

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestSelectorKeyAsJSON holds selectorKey, by which volumeFindings groups
// volumes, to the JSON encoding it replaced: two selectors share a key
// exactly when they share their JSON.
func TestSelectorKeyAsJSON(t *testing.T) {
	req := func(key string, op corev1.NodeSelectorOperator, vals ...string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
	}
	zone := "topology.kubernetes.io/zone"
	sels := []*corev1.NodeSelector{
		{},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "a")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "a")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "b")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "a", "b")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "ab")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "NotIn", "a")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{req(zone, "In", "a")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "a")}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "b")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req(zone, "In", "a"), req(zone, "In", "b")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req("1", "In", "2;3")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req("1;2", "In", "3")}}}},
		{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req("kubernetes.io/hostname", "Exists")}}}},
	}
	for i, a := range sels {
		ja, _ := json.Marshal(a)
		ka := string(selectorKey(nil, a))
		for j, b := range sels {
			jb, _ := json.Marshal(b)
			kb := string(selectorKey(nil, b))
			if (string(ja) == string(jb)) != (ka == kb) {
				t.Errorf("selectors %d and %d: JSON equal %v, keys equal %v (%q, %q)", i, j, string(ja) == string(jb), ka == kb, ka, kb)
			}
		}
	}
}
