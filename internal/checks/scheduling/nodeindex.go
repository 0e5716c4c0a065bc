package scheduling

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// nodeIndex answers "which nodes carry this label (value)" without scanning
// every node for every workload: at 5,000 nodes and a thousand templates a
// scan per template is millions of map lookups.
type nodeIndex struct {
	nodes    []*corev1.Node
	byName   map[string]int
	byKey    map[string][]int
	byKeyVal map[string]map[string][]int
}

func newNodeIndex(ns []corev1.Node) *nodeIndex {
	ix := &nodeIndex{byName: make(map[string]int, len(ns)), byKey: map[string][]int{}, byKeyVal: map[string]map[string][]int{}}
	for i := range ns {
		n := &ns[i]
		ix.nodes = append(ix.nodes, n)
		ix.byName[n.Name] = i
		for k, v := range n.Labels {
			ix.byKey[k] = append(ix.byKey[k], i)
			if ix.byKeyVal[k] == nil {
				ix.byKeyVal[k] = map[string][]int{}
			}
			ix.byKeyVal[k][v] = append(ix.byKeyVal[k][v], i)
		}
	}
	return ix
}

// requirement is one condition a node must meet: a nodeSelector entry
// (operator In with one value), a node-affinity matchExpression, or a
// matchFields entry on metadata.name (field true).
type requirement struct {
	key    string
	op     corev1.NodeSelectorOperator
	values []string
	field  bool
}

func (r requirement) String() string {
	k := r.key
	if r.field {
		k = "field " + k
	}
	switch r.op {
	case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return fmt.Sprintf("%s %s", k, r.op)
	case corev1.NodeSelectorOpIn:
		if len(r.values) == 1 {
			return fmt.Sprintf("%s=%s", k, r.values[0])
		}
	}
	return fmt.Sprintf("%s %s [%s]", k, r.op, strings.Join(r.values, ", "))
}

// positive reports whether r asks for a label to be there.
func (r requirement) positive() bool {
	switch r.op {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		return true
	}
	return false
}

// matches applies r to one node the way the scheduler does: a missing
// label fails In, Exists, Gt and Lt and passes NotIn and DoesNotExist.
func (r requirement) matches(n *corev1.Node) bool {
	if r.field {
		// metadata.name is the only field node affinity supports.
		in := slices.Contains(r.values, n.Name)
		if r.op == corev1.NodeSelectorOpNotIn {
			return !in
		}
		return r.op == corev1.NodeSelectorOpIn && in
	}
	v, has := n.Labels[r.key]
	switch r.op {
	case corev1.NodeSelectorOpIn:
		return has && slices.Contains(r.values, v)
	case corev1.NodeSelectorOpNotIn:
		return !has || !slices.Contains(r.values, v)
	case corev1.NodeSelectorOpExists:
		return has
	case corev1.NodeSelectorOpDoesNotExist:
		return !has
	case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
		if !has || len(r.values) != 1 {
			return false
		}
		nv, err1 := strconv.ParseInt(v, 10, 64)
		rv, err2 := strconv.ParseInt(r.values[0], 10, 64)
		if err1 != nil || err2 != nil {
			return false
		}
		if r.op == corev1.NodeSelectorOpGt {
			return nv > rv
		}
		return nv < rv
	}
	return false // an unknown operator matches nothing, as the API server would reject it
}

// candidates are the nodes that may meet r, from the index: all nodes for
// requirements that a missing label passes.
func (ix *nodeIndex) candidates(r requirement) ([]int, bool) {
	switch {
	case r.field && r.op == corev1.NodeSelectorOpIn:
		var out []int
		for _, v := range r.values {
			if i, ok := ix.byName[v]; ok {
				out = append(out, i)
			}
		}
		return out, true
	case r.field:
		return nil, false
	case r.op == corev1.NodeSelectorOpIn:
		var out []int
		for _, v := range r.values {
			out = append(out, ix.byKeyVal[r.key][v]...)
		}
		return out, true
	case r.op == corev1.NodeSelectorOpExists || r.op == corev1.NodeSelectorOpGt || r.op == corev1.NodeSelectorOpLt:
		return ix.byKey[r.key], true
	}
	return nil, false
}

// term is what one pod template asks of a node: its nodeSelector and one
// required node-affinity term, all of which must hold.
type term []requirement

func (t term) String() string {
	parts := make([]string, len(t))
	for i, r := range t {
		parts[i] = r.String()
	}
	return strings.Join(parts, ", ")
}

// matching returns the nodes that meet every requirement of t, narrowing
// first to the smallest candidate list a positive requirement gives.
func (ix *nodeIndex) matching(t term) []int {
	var best []int
	narrowed := false
	for _, r := range t {
		if c, ok := ix.candidates(r); ok && (!narrowed || len(c) < len(best)) {
			best, narrowed = c, true
		}
	}
	var out []int
	check := func(i int) {
		n := ix.nodes[i]
		for _, r := range t {
			if !r.matches(n) {
				return
			}
		}
		out = append(out, i)
	}
	if narrowed {
		seen := make(map[int]bool, len(best))
		for _, i := range best {
			if !seen[i] {
				seen[i] = true
				check(i)
			}
		}
		sort.Ints(out)
		return out
	}
	for i := range ix.nodes {
		check(i)
	}
	return out
}

// alone counts the nodes that meet r by itself, for evidence.
func (ix *nodeIndex) alone(r requirement) int {
	if c, ok := ix.candidates(r); ok {
		n := 0
		for _, i := range c {
			if r.matches(ix.nodes[i]) {
				n++
			}
		}
		return n
	}
	n := 0
	for _, node := range ix.nodes {
		if r.matches(node) {
			n++
		}
	}
	return n
}

// selection is what a pod spec asks of its node: the nodeSelector, and the
// required node-affinity terms, any one of which must hold. terms is nil
// when there is no required affinity; an empty, non-nil list matches no
// node (the API's rule for an empty nodeSelectorTerms).
type selection struct {
	terms []term
	// noTerms: required affinity with no usable term, which matches nothing.
	noTerms bool
}

// selectionOf reads spec's node selection. ok is false when the spec does
// not restrict its nodes at all.
func selectionOf(spec *corev1.PodSpec) (selection, bool) {
	var base term
	keys := make([]string, 0, len(spec.NodeSelector))
	for k := range spec.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		base = append(base, requirement{key: k, op: corev1.NodeSelectorOpIn, values: []string{spec.NodeSelector[k]}})
	}
	var req *corev1.NodeSelector
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		req = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if req == nil {
		if len(base) == 0 {
			return selection{}, false
		}
		return selection{terms: []term{base}}, true
	}
	var sel selection
	for _, t := range req.NodeSelectorTerms {
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue // an empty term matches no node
		}
		full := slices.Clone(base)
		for _, e := range t.MatchExpressions {
			full = append(full, requirement{key: e.Key, op: e.Operator, values: e.Values})
		}
		for _, f := range t.MatchFields {
			full = append(full, requirement{key: f.Key, op: f.Operator, values: f.Values, field: true})
		}
		sel.terms = append(sel.terms, full)
	}
	if len(sel.terms) == 0 {
		sel.noTerms = true
	}
	return sel, true
}

// appendKey appends to b the key that identifies a selection for
// memoising (templates of one chart share it): per term "|", then per
// requirement the bytes of fmt's "%v%s\x00%s\x00%s\x01" of field, key,
// operator and the values joined by \x02, without fmt or a string per
// template.
func (s selection) appendKey(b []byte) []byte {
	if s.noTerms {
		b = append(b, "none"...)
	}
	for _, t := range s.terms {
		b = append(b, '|')
		for i := range t {
			r := &t[i]
			b = strconv.AppendBool(b, r.field)
			b = append(b, r.key...)
			b = append(b, 0)
			b = append(b, r.op...)
			b = append(b, 0)
			for j, v := range r.values {
				if j > 0 {
					b = append(b, 2)
				}
				b = append(b, v...)
			}
			b = append(b, 1)
		}
	}
	return b
}

// tolerates reports whether any of ts tolerates taint, by the API's rules:
// an empty effect tolerates every effect, Exists with an empty key every
// key, Equal (the default) needs key and value.
func tolerates(ts []corev1.Toleration, taint corev1.Taint) bool {
	for _, t := range ts {
		if t.Effect != "" && t.Effect != taint.Effect {
			continue
		}
		switch t.Operator {
		case corev1.TolerationOpExists:
			if t.Key == "" || t.Key == taint.Key {
				return true
			}
		case corev1.TolerationOpEqual, "":
			if t.Key == taint.Key && t.Value == taint.Value {
				return true
			}
		}
	}
	return false
}
