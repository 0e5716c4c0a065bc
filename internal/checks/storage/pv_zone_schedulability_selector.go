package storage

// pv-zone-schedulability: a volume's required node selector, the key the
// volume-without-node rule groups volumes by, whether a node matches it, how
// evidence writes it and the zones it names.

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// selectorKey appends to b an encoding of sel that two selectors share
// only when their terms, keys, operators and values are the same, in the
// same order (each string length-prefixed): the key volumeFindings groups
// volumes by, where a JSON encoding cost an allocation per volume.
func selectorKey(b []byte, sel *corev1.NodeSelector) []byte {
	num := func(n int) { // every number ends in ';', so none runs into what follows
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ';')
	}
	str := func(v string) {
		num(len(v))
		b = append(b, v...)
	}
	reqs := func(tag byte, rs []corev1.NodeSelectorRequirement) {
		b = append(b, tag)
		num(len(rs))
		for i := range rs {
			r := &rs[i]
			str(r.Key)
			str(string(r.Operator))
			num(len(r.Values))
			for _, v := range r.Values {
				str(v)
			}
		}
	}
	num(len(sel.NodeSelectorTerms))
	for i := range sel.NodeSelectorTerms {
		reqs('e', sel.NodeSelectorTerms[i].MatchExpressions)
		reqs('f', sel.NodeSelectorTerms[i].MatchFields)
	}
	return b
}

// matchesSelector reports whether a node satisfies a required node
// selector: any term whose expressions and fields all match.
func matchesSelector(sel *corev1.NodeSelector, n *corev1.Node) bool {
	for _, t := range sel.NodeSelectorTerms {
		if len(t.MatchExpressions)+len(t.MatchFields) == 0 {
			continue // an empty term matches nothing
		}
		ok := true
		for _, r := range t.MatchExpressions {
			v, has := n.Labels[r.Key]
			ok = ok && requirementMatches(r, v, has)
		}
		for _, r := range t.MatchFields {
			ok = ok && r.Key == "metadata.name" && requirementMatches(r, n.Name, true)
		}
		if ok {
			return true
		}
	}
	return false
}

func requirementMatches(r corev1.NodeSelectorRequirement, v string, has bool) bool {
	in := func() bool {
		for _, x := range r.Values {
			if x == v {
				return true
			}
		}
		return false
	}
	switch r.Operator {
	case corev1.NodeSelectorOpIn:
		return has && in()
	case corev1.NodeSelectorOpNotIn:
		return !has || !in()
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.Values) != 1 {
			return false
		}
		a, err1 := strconv.ParseInt(v, 10, 64)
		b, err2 := strconv.ParseInt(r.Values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		return r.Operator == corev1.NodeSelectorOpGt && a > b || r.Operator == corev1.NodeSelectorOpLt && a < b
	}
	return false
}

func describeSelector(sel *corev1.NodeSelector) string {
	var terms []string
	for _, t := range sel.NodeSelectorTerms {
		var parts []string
		for _, r := range t.MatchExpressions {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
		}
		for _, r := range t.MatchFields {
			parts = append(parts, fmt.Sprintf("%s %s %s", r.Key, r.Operator, strings.Join(r.Values, ",")))
		}
		terms = append(terms, strings.Join(parts, " and "))
	}
	return strings.Join(terms, " or ")
}

// affinityZones are the zones a selector's In requirements on zone keys name.
func affinityZones(sel *corev1.NodeSelector) []string {
	var out []string
	for _, t := range sel.NodeSelectorTerms {
		for _, r := range t.MatchExpressions {
			if strings.Contains(r.Key, "zone") && r.Operator == corev1.NodeSelectorOpIn {
				out = append(out, r.Values...)
			}
		}
	}
	return out
}
