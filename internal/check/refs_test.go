package check

import (
	"fmt"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
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
