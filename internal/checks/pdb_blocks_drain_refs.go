package checks

// Helpers shared by the workload-centric checks (pdb-blocks-drain,
// pod-sandbox-failures, image-pull-always, webhook-blast-radius): capped
// object lists, pod readiness and container statuses, trimmed quotes of
// event messages.

import (
	"fmt"
	"iter"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// listCap bounds how many objects of one kind, and how many evidence lines,
// a finding carries, so a 5,000-node cluster still gives readable output.
// What is left out is counted in the message.
const listCap = 50

// objRef names an object of a known resource.
func objRef(r snapshot.Resource, namespace, name string) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: r.APIVersion(), Kind: r.Kind, Namespace: namespace, Name: name}
}

// cappedRefs collects distinct object references in insertion order, at most
// listCap of each kind, and counts the ones it drops.
type cappedRefs struct {
	seen    map[finding.ObjectRef]bool
	refs    []finding.ObjectRef
	kept    map[string]int
	dropped map[string]int
}

func newCappedRefs() *cappedRefs {
	return &cappedRefs{seen: map[finding.ObjectRef]bool{}, kept: map[string]int{}, dropped: map[string]int{}}
}

// add records a reference; a repeat is ignored.
func (c *cappedRefs) add(ref finding.ObjectRef) {
	if c.seen[ref] {
		return
	}
	c.seen[ref] = true
	if c.kept[ref.Kind] >= listCap {
		c.dropped[ref.Kind]++
		return
	}
	c.kept[ref.Kind]++
	c.refs = append(c.refs, ref)
}

// count is how many distinct objects of a kind were added, kept or not.
func (c *cappedRefs) count(kind string) int { return c.kept[kind] + c.dropped[kind] }

// names lists the kept objects of a kind as namespace/name (or name).
func (c *cappedRefs) names(kind string) []string {
	var out []string
	for _, r := range c.refs {
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

// summary says "3 pods (a, b, c)" or "120 pods (a, ..., and 70 more)", with
// the first few names, for messages.
func (c *cappedRefs) summary(kind, singular, plural string, shown int) string {
	n := c.count(kind)
	word := plural
	if n == 1 {
		word = singular
	}
	names := c.names(kind)
	if len(names) == 0 {
		return fmt.Sprintf("%d %s", n, word)
	}
	if len(names) > shown {
		names = names[:shown]
	}
	s := fmt.Sprintf("%d %s (%s", n, word, strings.Join(names, ", "))
	if rest := n - len(names); rest > 0 {
		s += fmt.Sprintf(", and %d more", rest)
	}
	return s + ")"
}

// list returns the kept references, sorted by kind order of insertion then
// namespace and name, so output does not depend on map order.
func (c *cappedRefs) list() []finding.ObjectRef {
	out := append([]finding.ObjectRef(nil), c.refs...)
	order := map[string]int{}
	for _, r := range c.refs {
		if _, ok := order[r.Kind]; !ok {
			order[r.Kind] = len(order)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Kind != b.Kind {
			return order[a.Kind] < order[b.Kind]
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// addPodAndNode records a pod and, when it is bound, its node.
func (c *cappedRefs) addPodAndNode(p *snapshot.Pod) {
	c.add(objRef(snapshot.Pods, p.Namespace, p.Name))
	if p.Spec.NodeName != "" {
		c.add(objRef(snapshot.Nodes, "", p.Spec.NodeName))
	}
}

// podTerminal reports whether the pod has finished or is being deleted: such
// pods count for no budget and no sandbox.
func podTerminal(p *snapshot.Pod) bool {
	return p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// containerStatuses yields a pod's init and regular container statuses,
// without copying them (it runs for every pod a check looks at).
func containerStatuses(p *snapshot.Pod) iter.Seq[*snapshot.ContainerStatus] {
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

// quoteMessage collapses whitespace in an event message and, when it is
// long, keeps a window of at most max characters around position at (the
// matched signature), marking the cuts with "…". at < 0 keeps the start.
func quoteMessage(msg string, at, max int) string {
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
