package check

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// CappedRefs keeps the first MaxListedObjects distinct objects of each
// kind in insertion order, ignores repeats, and counts every distinct
// object, kept or dropped.
func TestCappedRefsDistinctAndCapped(t *testing.T) {
	c := NewCappedRefs()
	pod := func(i int) finding.ObjectRef {
		return finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "a", Name: fmt.Sprintf("p%03d", i)}
	}
	node := func(i int) finding.ObjectRef { return NodeRef(fmt.Sprintf("n%d", i)) }
	for i := range MaxListedObjects + 30 {
		c.Add(pod(i))
		c.Add(pod(i)) // a repeat at once
		c.Add(node(i % 3))
		if i > 0 {
			c.Add(pod(i - 1)) // and one later
		}
	}
	if got := c.Count("Pod"); got != MaxListedObjects+30 {
		t.Errorf("Count(Pod) = %d, want %d", got, MaxListedObjects+30)
	}
	if got := c.Count("Node"); got != 3 {
		t.Errorf("Count(Node) = %d, want 3", got)
	}
	names := c.Names("Pod")
	if len(names) != MaxListedObjects || names[0] != "a/p000" || names[MaxListedObjects-1] != fmt.Sprintf("a/p%03d", MaxListedObjects-1) {
		t.Errorf("kept pods %d, first %q, last %q: want the first %d in order", len(names), names[0], names[len(names)-1], MaxListedObjects)
	}
	if got := len(c.List()); got != MaxListedObjects+3 {
		t.Errorf("List has %d references, want %d", got, MaxListedObjects+3)
	}
	if got := c.Summary("Node", "node", "nodes", 5); got != "3 nodes (n0, n1, n2)" {
		t.Errorf("Summary(Node) = %q", got)
	}
}

// AddDistinctPodsAndNodes records what AddPodAndNode, pod by pod, does:
// the same list, counts and summaries, and a pod added again afterwards
// (alone or in a second list) is still a repeat.
func TestAddDistinctPodsAsAddPodAndNode(t *testing.T) {
	var pods []*snapshot.Pod
	for i := range MaxListedObjects + 20 {
		node := fmt.Sprintf("n%d", i%7)
		if i%11 == 0 {
			node = "" // not bound
		}
		pods = append(pods, &snapshot.Pod{SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "a"}, Name: fmt.Sprintf("p%03d", (i*37)%(MaxListedObjects+20)), Spec: snapshot.PodSpec{NodeName: node}})
	}
	budget := finding.ObjectRef{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "a", Name: "b"}
	for name, then := range map[string]func(c *CappedRefs){
		"nothing after":       func(*CappedRefs) {},
		"a repeat after":      func(c *CappedRefs) { c.AddPodAndNode(pods[3]) },
		"a new pod after":     func(c *CappedRefs) { c.Add(ResourceRef(snapshot.Pods, "b", "new")) },
		"the list again":      func(c *CappedRefs) { c.AddDistinctPodsAndNodes(pods[:10]) },
		"a node, then repeat": func(c *CappedRefs) { c.Add(NodeRef("n99")); c.AddPodAndNode(pods[len(pods)-1]) },
	} {
		one, bulk := NewCappedRefs(), NewCappedRefs()
		one.Add(budget)
		bulk.Add(budget)
		for _, p := range pods {
			one.AddPodAndNode(p)
		}
		bulk.AddDistinctPodsAndNodes(pods)
		then(one)
		then(bulk)
		for _, kind := range []string{"Pod", "Node", "PodDisruptionBudget"} {
			if a, b := one.Count(kind), bulk.Count(kind); a != b {
				t.Errorf("%s: Count(%s) %d, pod by pod %d", name, kind, b, a)
			}
			if a, b := one.Summary(kind, "x", "xs", 5), bulk.Summary(kind, "x", "xs", 5); a != b {
				t.Errorf("%s: Summary(%s) %q, pod by pod %q", name, kind, b, a)
			}
		}
		if a, b := one.List(), bulk.List(); fmt.Sprint(a) != fmt.Sprint(b) {
			t.Errorf("%s: List differs:\n%v\npod by pod:\n%v", name, b, a)
		}
	}
}

// AddDistinctPodsAndNodesMarked records what AddPodAndNode, pod by pod,
// does: more nodes than are kept, nodes in the input and not, unbound
// pods; then repeats and new objects added after it, and a second
// CappedRefs marked with the same marks.
func TestAddDistinctPodsMarkedAsAddPodAndNode(t *testing.T) {
	const nodes, listed = MaxListedObjects + 30, MaxListedObjects + 20
	s := snapshot.New(snapshot.Source{})
	for i := range listed {
		s.Nodes = append(s.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", i)}})
	}
	var items []corev1.Pod
	for i := range 3 * nodes {
		node := fmt.Sprintf("n%02d", (i*7)%nodes)
		if i%11 == 0 {
			node = "" // not bound
		}
		items = append(items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("p%03d", (i*37)%(3*nodes))},
			Spec: corev1.PodSpec{NodeName: node}})
	}
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: items})
	s.Finish()
	pods := make([]*snapshot.Pod, len(s.Pods))
	for i := range s.Pods {
		pods[i] = &s.Pods[i]
	}
	outside := &snapshot.Pod{SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "b"}, Name: "outside", Spec: snapshot.PodSpec{NodeName: "n01"}}
	budget := finding.ObjectRef{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: "a", Name: "b"}
	marks := NewPodNodeMarks(s)
	for name, then := range map[string]func(c *CappedRefs){
		"nothing after":           func(*CappedRefs) {},
		"a repeat after":          func(c *CappedRefs) { c.AddPodAndNode(pods[3]) },
		"a listed node again":     func(c *CappedRefs) { c.Add(NodeRef("n05")) },
		"an unlisted node again":  func(c *CappedRefs) { c.Add(NodeRef(fmt.Sprintf("n%02d", listed+1))) },
		"a new node, then repeat": func(c *CappedRefs) { c.Add(NodeRef("n99")); c.AddPodAndNode(pods[len(pods)-1]) },
		"the list again, marked":  func(c *CappedRefs) { c.AddDistinctPodsAndNodesMarked(pods[:10], marks) },
		"a pod of no snapshot":    func(c *CappedRefs) { c.AddDistinctPodsAndNodesMarked([]*snapshot.Pod{outside, pods[0]}, marks) },
	} {
		for _, part := range [][]*snapshot.Pod{pods, pods[:MaxListedObjects/2], nil} {
			one, marked := NewCappedRefs(), NewCappedRefs()
			one.Add(budget)
			marked.Add(budget)
			for _, p := range part {
				one.AddPodAndNode(p)
			}
			marked.AddDistinctPodsAndNodesMarked(part, marks)
			then(one)
			then(marked)
			for _, kind := range []string{"Pod", "Node", "PodDisruptionBudget"} {
				if a, b := one.Count(kind), marked.Count(kind); a != b {
					t.Errorf("%s, %d pods: Count(%s) %d, pod by pod %d", name, len(part), kind, b, a)
				}
				if a, b := one.Summary(kind, "x", "xs", 5), marked.Summary(kind, "x", "xs", 5); a != b {
					t.Errorf("%s, %d pods: Summary(%s) %q, pod by pod %q", name, len(part), kind, b, a)
				}
			}
			if a, b := one.List(), marked.List(); fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s, %d pods: List differs:\n%v\npod by pod:\n%v", name, len(part), b, a)
			}
		}
	}
}

// TakeList returns what List does, whether it hands over the references
// (grouped by kind and sorted) or copies them (a kind in two runs, a run
// out of order, nothing added).
func TestTakeListAsList(t *testing.T) {
	pod := func(n string) finding.ObjectRef { return ResourceRef(snapshot.Pods, "a", n) }
	for name, refs := range map[string][]finding.ObjectRef{
		"nothing":          nil,
		"grouped, sorted":  {pod("p1"), pod("p2"), NodeRef("n1"), NodeRef("n2")},
		"a run unsorted":   {pod("p1"), pod("p2"), NodeRef("n2"), NodeRef("n1")},
		"a kind in 2 runs": {pod("p2"), NodeRef("n1"), pod("p1"), NodeRef("n2")},
	} {
		a, b := NewCappedRefs(), NewCappedRefs()
		for _, r := range refs {
			a.Add(r)
			b.Add(r)
		}
		want := a.List()
		got := b.TakeList()
		if fmt.Sprint(got) != fmt.Sprint(want) || (got == nil) != (want == nil) || cap(got) != len(got) {
			t.Errorf("%s: TakeList %v (cap %d), List %v", name, got, cap(got), want)
		}
	}
}
