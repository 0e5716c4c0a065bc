package check

// What the workload-centric checks share (pdb-blocks-drain in
// availability, pod-sandbox-failures in runtime, image-pull-always in
// registries, webhook-blast-radius in availability): capped object lists,
// terminal pods and container statuses, trimmed quotes of event messages.

import (
	"fmt"
	"iter"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// EventQuoteLen bounds a quoted event message in evidence (QuoteMessage's
// max for the sandbox and pull-failure events the checks quote).
const EventQuoteLen = 300

// ResourceRef names an object of a known resource.
func ResourceRef(r snapshot.Resource, namespace, name string) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: r.APIVersion(), Kind: r.Kind, Namespace: namespace, Name: name}
}

// CappedRefs collects distinct object references in insertion order, at
// most MaxListedObjects of each kind (so a 5,000-node cluster still gives a
// readable finding), and counts the ones it drops for the message.
type CappedRefs struct {
	seen    map[refKey]struct{}
	refs    []finding.ObjectRef
	kept    map[string]int
	dropped map[string]int
	// distinctPods are pods AddDistinctPodsAndNodes recorded without
	// putting them in seen; they go there when another pod is added.
	distinctPods []*snapshot.Pod
	// distinctNodes: the nodes of distinctPods are not in seen either
	// (AddDistinctPodsAndNodesMarked); they go there with the pods, when
	// another pod or node is added.
	distinctNodes bool
}

// refKey is what makes two references one object: kind, namespace and
// name. Half the bytes of a whole ObjectRef to hash and store, for the
// tens of thousands of pods and nodes a finding may cover.
type refKey struct{ kind, namespace, name string }

func keyOf(r finding.ObjectRef) refKey { return refKey{r.Kind, r.Namespace, r.Name} }

// NewCappedRefs returns an empty CappedRefs.
func NewCappedRefs() *CappedRefs {
	return &CappedRefs{seen: map[refKey]struct{}{}, kept: map[string]int{}, dropped: map[string]int{}}
}

// Add records a reference; a repeat is ignored.
func (c *CappedRefs) Add(ref finding.ObjectRef) {
	if c.distinctPods != nil && (ref.Kind == snapshot.Pods.Kind || c.distinctNodes && ref.Kind == snapshot.Nodes.Kind) {
		c.rememberDistinctPods()
	}
	// One hash of the reference's four strings, not two: a repeat leaves
	// the set's size as it was. The checks add every pod a budget or a
	// workload covers, thousands per finding at 100,000 pods.
	n := len(c.seen)
	c.seen[keyOf(ref)] = struct{}{}
	if len(c.seen) == n {
		return
	}
	if c.kept[ref.Kind] >= MaxListedObjects {
		c.dropped[ref.Kind]++
		return
	}
	c.kept[ref.Kind]++
	c.refs = append(c.refs, ref)
}

// Count is how many distinct objects of a kind were added, kept or not.
func (c *CappedRefs) Count(kind string) int { return c.kept[kind] + c.dropped[kind] }

// Names lists the kept objects of a kind as namespace/name (or name).
func (c *CappedRefs) Names(kind string) []string { return c.names(kind, len(c.refs)) }

// names is Names' first n, built no further: Summary shows a few.
func (c *CappedRefs) names(kind string, n int) []string {
	var out []string
	for _, r := range c.refs {
		if len(out) == n {
			break
		}
		if r.Kind != kind {
			continue
		}
		if r.Namespace == "" {
			out = append(out, r.Name)
		} else {
			out = append(out, r.Namespace+"/"+r.Name)
		}
	}
	return out
}

// Summary says "3 pods (a, b, c)" or "120 pods (a, ..., and 70 more)", with
// the first few names, for messages.
func (c *CappedRefs) Summary(kind, singular, plural string, shown int) string {
	n := c.Count(kind)
	word := plural
	if n == 1 {
		word = singular
	}
	names := c.names(kind, shown)
	if len(names) == 0 {
		return fmt.Sprintf("%d %s", n, word)
	}
	s := fmt.Sprintf("%d %s (%s", n, word, strings.Join(names, ", "))
	if rest := n - len(names); rest > 0 {
		s += fmt.Sprintf(", and %d more", rest)
	}
	return s + ")"
}

// List returns the kept references, sorted by kind order of insertion then
// namespace and name, so output does not depend on map order.
func (c *CappedRefs) List() []finding.ObjectRef {
	// The kinds in order of first insertion: a finding names two or three
	// kinds, so the references are grouped by kind in a few passes, and
	// each group is sorted only when it is not in order already (the
	// checks add pods and nodes in the snapshot's order, usually sorted).
	// pdb-blocks-drain builds hundreds of findings at 100,000 pods, where
	// a reflective sort of every list was a tenth of its time.
	var kinds []string
	for _, r := range c.refs {
		if !slices.Contains(kinds, r.Kind) {
			kinds = append(kinds, r.Kind)
		}
	}
	out := make([]finding.ObjectRef, 0, len(c.refs))
	for _, k := range kinds {
		start := len(out)
		for _, r := range c.refs {
			if r.Kind == k {
				out = append(out, r)
			}
		}
		if group := out[start:]; !slices.IsSortedFunc(group, byName) {
			slices.SortStableFunc(group, byName)
		}
	}
	return out
}

// byName orders references of one kind by namespace and name.
func byName(a, b finding.ObjectRef) int {
	if c := strings.Compare(a.Namespace, b.Namespace); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}

// TakeList is List for a caller done with c: when the references are
// already grouped by kind, in List's order, it returns c's own list
// rather than a copy. pdb-blocks-drain lists hundreds of findings of a
// hundred pods and nodes at 100,000 pods, where the copies were a quarter
// of the bytes it allocated.
func (c *CappedRefs) TakeList() []finding.ObjectRef {
	var kinds []string
	start := 0
	for i := 1; i <= len(c.refs); i++ {
		if i < len(c.refs) && c.refs[i].Kind == c.refs[start].Kind {
			continue
		}
		// c.refs[start:i] is one run of a kind.
		k := c.refs[start].Kind
		if slices.Contains(kinds, k) || !slices.IsSortedFunc(c.refs[start:i], byName) {
			return c.List()
		}
		kinds = append(kinds, k)
		start = i
	}
	if len(c.refs) == 0 {
		return c.List()
	}
	return c.refs[:len(c.refs):len(c.refs)]
}

// AddDistinctPodsAndNodes does what AddPodAndNode does for each pod, in
// order, for pods of which none appears twice (as the index's lists and
// the pods a selector matches are): while no other pod has been added,
// the pods need no repeat check, and are put in the set of those seen
// only when another pod is added later. pdb-blocks-drain adds every pod a
// budget with a finding covers, tens of thousands at 100,000 pods, where
// the set's hashing and growth were a sixth of its time.
func (c *CappedRefs) AddDistinctPodsAndNodes(pods []*snapshot.Pod) {
	if c.distinctPods != nil || c.Count(snapshot.Pods.Kind) > 0 {
		for _, p := range pods {
			c.AddPodAndNode(p)
		}
		return
	}
	c.distinctPods = pods
	kind := snapshot.Pods.Kind
	for _, p := range pods {
		if c.kept[kind] >= MaxListedObjects {
			c.dropped[kind]++
		} else {
			c.kept[kind]++
			c.refs = append(c.refs, ResourceRef(snapshot.Pods, p.Namespace, p.Name))
		}
		if p.Spec.NodeName != "" {
			c.Add(ResourceRef(snapshot.Nodes, "", p.Spec.NodeName))
		}
	}
	if len(pods) == 0 {
		c.distinctPods = nil
	}
}

// rememberDistinctPods puts the pods AddDistinctPodsAndNodes recorded, and
// their nodes when AddDistinctPodsAndNodesMarked recorded them, in the set
// of those seen.
func (c *CappedRefs) rememberDistinctPods() {
	for _, p := range c.distinctPods {
		c.seen[refKey{snapshot.Pods.Kind, p.Namespace, p.Name}] = struct{}{}
		if c.distinctNodes && p.Spec.NodeName != "" {
			c.seen[refKey{snapshot.Nodes.Kind, "", p.Spec.NodeName}] = struct{}{}
		}
	}
	c.distinctPods, c.distinctNodes = nil, false
}

// count adds kept and dropped objects of a kind to the counts.
func (c *CappedRefs) count(kind string, kept, dropped int) {
	if kept > 0 {
		c.kept[kind] += kept
	}
	if dropped > 0 {
		c.dropped[kind] += dropped
	}
}

// PodNodeMarks tells apart the nodes of a snapshot's pods by the nodes'
// positions (PodNodesOf), one round of marks at a time, for
// AddDistinctPodsAndNodesMarked. It serves one caller at a time: a check
// makes one per run.
type PodNodeMarks struct {
	s        *snapshot.Snapshot
	podNodes []int32
	mark     []uint32 // by node position: the round that saw the node
	round    uint32
}

// NewPodNodeMarks returns marks for the nodes of s's pods.
func NewPodNodeMarks(s *snapshot.Snapshot) *PodNodeMarks {
	return &PodNodeMarks{s: s, podNodes: PodNodesOf(s), mark: make([]uint32, len(s.Nodes))}
}

// next starts a round in which no node is marked yet.
func (m *PodNodeMarks) next() {
	m.round++
	if m.round == 0 {
		clear(m.mark)
		m.round = 1
	}
}

// holds reports whether every pod points into the snapshot's list, so
// that its node has a position or is, by name, in no node of the input.
func (m *PodNodeMarks) holds(pods []*snapshot.Pod) bool {
	if len(m.podNodes) != len(m.s.Pods) {
		return false
	}
	for _, p := range pods {
		if PodPosition(m.s, p) < 0 {
			return false
		}
	}
	return true
}

// AddDistinctPodsAndNodesMarked does what AddDistinctPodsAndNodes does,
// with the pods' nodes told apart by their positions in m rather than
// hashed into the set of those seen, where they go only when another pod
// or node is added later. pdb-blocks-drain adds the nodes of every pod a
// budget with a finding covers, where hashing each node's reference and
// growing the set was a third of its time at 100,000 pods. Nodes added
// before, pods of another snapshot or m nil: as AddDistinctPodsAndNodes.
func (c *CappedRefs) AddDistinctPodsAndNodesMarked(pods []*snapshot.Pod, m *PodNodeMarks) {
	if m == nil || c.distinctPods != nil || c.Count(snapshot.Pods.Kind) > 0 || c.Count(snapshot.Nodes.Kind) > 0 || !m.holds(pods) {
		c.AddDistinctPodsAndNodes(pods)
		return
	}
	if len(pods) == 0 {
		return
	}
	m.next()
	// The pods, then their nodes: each kind's references in one run, in
	// the order AddPodAndNode would leave them within the kind, which is
	// all List and Summary read, so TakeList can often hand them over.
	keptPods := min(len(pods), MaxListedObjects)
	droppedPods := len(pods) - keptPods
	c.refs = slices.Grow(c.refs, keptPods+min(len(pods), MaxListedObjects))
	for _, p := range pods[:keptPods] {
		c.refs = append(c.refs, ResourceRef(snapshot.Pods, p.Namespace, p.Name))
	}
	var (
		keptNodes, droppedNodes int
		// Nodes not in the input, by name: no position tells them apart.
		unlisted map[string]bool
	)
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if n := m.podNodes[PodPosition(m.s, p)]; n >= 0 {
			if m.mark[n] == m.round {
				continue
			}
			m.mark[n] = m.round
		} else {
			if unlisted[p.Spec.NodeName] {
				continue
			}
			if unlisted == nil {
				unlisted = map[string]bool{}
			}
			unlisted[p.Spec.NodeName] = true
		}
		if keptNodes < MaxListedObjects {
			keptNodes++
			c.refs = append(c.refs, ResourceRef(snapshot.Nodes, "", p.Spec.NodeName))
		} else {
			droppedNodes++
		}
	}
	c.count(snapshot.Pods.Kind, keptPods, droppedPods)
	c.count(snapshot.Nodes.Kind, keptNodes, droppedNodes)
	c.distinctPods, c.distinctNodes = pods, true
}

// AddPodAndNode records a pod and, when it is bound, its node.
func (c *CappedRefs) AddPodAndNode(p *snapshot.Pod) {
	c.Add(ResourceRef(snapshot.Pods, p.Namespace, p.Name))
	if p.Spec.NodeName != "" {
		c.Add(ResourceRef(snapshot.Nodes, "", p.Spec.NodeName))
	}
}

// PodTerminal reports whether the pod has finished or is being deleted: such
// pods count for no budget and no sandbox.
func PodTerminal(p *snapshot.Pod) bool {
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// ContainerStatuses yields a pod's init and regular container statuses,
// without copying them (it runs for every pod a check looks at).
func ContainerStatuses(p *snapshot.Pod) iter.Seq[*snapshot.ContainerStatus] {
	return func(yield func(*snapshot.ContainerStatus) bool) {
		for _, list := range [][]snapshot.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
			for i := range list {
				if !yield(&list[i]) {
					return
				}
			}
		}
	}
}

// QuoteMessage collapses whitespace in an event message and, when it is
// long, keeps a window of at most max characters around position at (the
// matched signature), marking the cuts with "…". at < 0 keeps the start.
func QuoteMessage(msg string, at, max int) string {
	// Collapse whitespace first, tracking where the match moved to.
	var b strings.Builder
	newAt := -1
	space := false
	for i, r := range msg {
		if i >= at && newAt < 0 && at >= 0 {
			newAt = b.Len()
		}
		if r == '\n' || r == '\t' || r == '\r' || r == ' ' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	s := b.String()
	if len(s) <= max {
		return s
	}
	if newAt < 0 {
		newAt = 0
	}
	start := newAt - max/3
	if start < 0 {
		start = 0
	}
	end := start + max
	if end > len(s) {
		end = len(s)
		start = end - max
	}
	// Cut on rune boundaries.
	for start > 0 && !isRuneStart(s[start]) {
		start--
	}
	for end < len(s) && !isRuneStart(s[end]) {
		end++
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
