package scheduling

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
)

// Evidence items of removed-node-labels and selector-matches-no-node: a
// template's node selection and tolerations, and nodes grouped by the
// labels and taints the rules read.

// maxNodeGroups bounds the node groups one finding quotes: a selection on
// kubernetes.io/hostname makes a group of every node.
const maxNodeGroups = 10

// selectionItem quotes a template's nodeSelector and required node
// affinity, each whole, as read; ok is false when it has neither.
func selectionItem(w workload) (finding.EvidenceItem, bool) {
	spec := check.PodSpecPath(w.kind)
	var fields []finding.Field
	if len(w.spec.NodeSelector) > 0 {
		fields = append(fields, finding.Value(spec+".nodeSelector", finding.JSONText(w.spec.NodeSelector)))
	}
	if a := w.spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		fields = append(fields, finding.Value(spec+".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
			finding.JSONText(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)))
	}
	if len(fields) == 0 {
		return finding.EvidenceItem{}, false
	}
	return finding.Quote(w.ref(), fields...), true
}

// tolerationsItem quotes a template's tolerations whole, or their absence.
func tolerationsItem(w workload) finding.EvidenceItem {
	path := check.PodSpecPath(w.kind) + ".tolerations"
	if len(w.spec.Tolerations) == 0 {
		return finding.Quote(w.ref(), finding.Absent(path))
	}
	return finding.Quote(w.ref(), finding.Value(path, finding.JSONText(w.spec.Tolerations)))
}

// labelPath is the field path of label key.
func labelPath(key string) string { return "metadata.labels[" + key + "]" }

// labelFieldAt quotes one label of a node at path, the label's field path
// (labelPath), built by the caller once per key rather than once per node:
// labelsOf quotes every node of the cluster for each finding. ok is false
// for a label present with an empty value (the role labels), which an item
// cannot quote, since an empty string reads as absent.
func labelFieldAt(n *corev1.Node, key, path string) (finding.Field, bool) {
	v, has := n.Labels[key]
	switch {
	case !has:
		return finding.Absent(path), true
	case v == "":
		return finding.Field{}, false
	}
	return finding.Field{Path: path, Value: v}, true // finding.Value's, without boxing v
}

// taintFields quotes a node's taint: key and effect (and value when set),
// by the key when the node has one taint of that key, else by position.
func taintFields(n *corev1.Node, t corev1.Taint) []finding.Field {
	idx, same := -1, 0
	for i, x := range n.Spec.Taints {
		if x.Key == t.Key {
			same++
			if idx < 0 && x.Effect == t.Effect && x.Value == t.Value {
				idx = i
			}
		}
	}
	base := "spec.taints[key=" + t.Key + "]"
	if same > 1 && idx >= 0 {
		base = fmt.Sprintf("spec.taints[%d]", idx)
	}
	fs := []finding.Field{finding.Value(base+".key", t.Key), finding.Value(base+".effect", string(t.Effect))}
	if t.Value != "" {
		fs = append(fs, finding.Value(base+".value", t.Value))
	}
	return fs
}

// nodeGroups groups nodes by the fields fields gives each (nodes it gives
// none are left out) and keeps the first maxNodeGroups groups; left is how
// many groups are not kept.
func nodeGroups(nodes []*corev1.Node, fields func(*corev1.Node) []finding.Field) (items []finding.EvidenceItem, left int) {
	var g finding.Grouper
	for _, n := range nodes {
		if fs := fields(n); len(fs) > 0 {
			g.Add(check.NodeRef(n.Name), fs...)
		}
	}
	items = g.Items()
	if len(items) <= maxNodeGroups {
		return items, 0
	}
	return items[:maxNodeGroups], len(items) - maxNodeGroups
}

// addNodeGroups adds nodeGroups' items to f, and a line for the groups
// left out.
func addNodeGroups(f *finding.Finding, nodes []*corev1.Node, fields func(*corev1.Node) []finding.Field) {
	items, left := nodeGroups(nodes, fields)
	f.AddEvidence(items...)
	if left > 0 {
		f.Evidence = append(f.Evidence, fmt.Sprintf("and %s of nodes with other values", check.Plural(left, "group", "groups")))
	}
}

// labelsOf is a fields function quoting the labels keys of each node.
func labelsOf(keys ...string) func(*corev1.Node) []finding.Field {
	var distinct, paths []string
	for _, k := range keys {
		if !slices.Contains(distinct, k) {
			distinct = append(distinct, k)
			paths = append(paths, labelPath(k))
		}
	}
	// One slice for every node: nodeGroups hands it to Grouper.Add, which
	// copies the fields of a new group and keeps nothing else of them.
	var fs []finding.Field
	return func(n *corev1.Node) []finding.Field {
		fs = fs[:0]
		for i, k := range distinct {
			if f, ok := labelFieldAt(n, k, paths[i]); ok {
				fs = append(fs, f)
			}
		}
		return fs
	}
}
