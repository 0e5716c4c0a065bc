package check

import (
	"runtime"
	"sync"
	"unsafe"
	"weak"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// PodWorkloads is the workload that made each pod of a snapshot, as
// snapshot.Index.WorkloadVia finds it, by the pod's position in
// Snapshot.Pods. Several checks group pods under their workloads; each
// followed every pod's owner references through the index's maps (a few
// cache misses a pod, most of their time at 100,000 pods). The table is
// worked out once per snapshot index (PodWorkloadsOf) and only read after.
type PodWorkloads struct {
	// Of is, for each pod by position, its entry in Workloads, or -1 for
	// a pod without a controller.
	Of []int32
	// Workloads holds one entry per distinct owner reference (with the
	// pod's namespace), in the order of the first pod of each.
	Workloads []PodWorkload
	// Groups is how many distinct owner IDs the entries have.
	Groups int

	groupOf map[snapshot.OwnerID]int32
	// via holds, by pod position, how the tie was inferred, for the pods
	// whose tie was (WorkloadVia's via); most have none.
	via map[int32]string
}

// PodWorkload is one owner reference pods were tied to.
type PodWorkload struct {
	// Ref is the workload's controller reference, as WorkloadVia returned it.
	Ref       metav1.OwnerReference
	Namespace string
	// ID is snapshot.RefID(Namespace, Ref); Group numbers the distinct IDs
	// from 0, so that a check can keep per-workload state in a slice.
	ID    snapshot.OwnerID
	Group int32
}

// Via is how the pod at position i was tied to its workload when the
// owner was not read from the objects, or "" (WorkloadVia's via).
func (t *PodWorkloads) Via(i int) string {
	if len(t.via) == 0 {
		return ""
	}
	return t.via[int32(i)]
}

// Group is the group number of an owner ID, or -1 when no pod belongs to it.
func (t *PodWorkloads) Group(id snapshot.OwnerID) int32 {
	if g, ok := t.groupOf[id]; ok {
		return g
	}
	return -1
}

// BuildPodWorkloads works the table out for s, without the cache of
// PodWorkloadsOf (for tests and for timing the build).
func BuildPodWorkloads(s *snapshot.Snapshot) *PodWorkloads {
	ix := s.Index()
	type refKey struct {
		ns                     string
		apiVersion, kind, name string
		uid                    string
	}
	t := &PodWorkloads{Of: make([]int32, len(s.Pods)), groupOf: map[snapshot.OwnerID]int32{}}
	entries := map[refKey]int32{}
	// Pods come sorted by namespace and name, so a workload's pods mostly
	// follow one another: a pod with the same namespace and controller
	// reference as the one before gets its entry when WorkloadVia's answer
	// cannot depend on the pod's own labels, which it does only for a
	// ReplicaSet it could not follow (the pod-template-hash inference) and
	// for a pod without a controller (the Job labels).
	var prevNS string
	var prevCtl *metav1.OwnerReference
	prevEntry := int32(-1)
	for i := range s.Pods {
		p := &s.Pods[i]
		ctl := controllerRef(p.OwnerReferences)
		if ctl != nil && prevCtl != nil && p.Namespace == prevNS && sameRef(ctl, prevCtl) {
			t.Of[i] = prevEntry
			continue
		}
		prevCtl = nil
		o, via, ok := ix.WorkloadVia(p)
		if !ok {
			t.Of[i] = -1
			continue
		}
		if via != "" {
			if t.via == nil {
				t.via = map[int32]string{}
			}
			t.via[int32(i)] = via
		}
		k := refKey{p.Namespace, o.APIVersion, o.Kind, o.Name, string(o.UID)}
		e, seen := entries[k]
		if !seen {
			id := snapshot.RefID(p.Namespace, o)
			g, known := t.groupOf[id]
			if !known {
				g = int32(len(t.groupOf))
				t.groupOf[id] = g
			}
			e = int32(len(t.Workloads))
			entries[k] = e
			t.Workloads = append(t.Workloads, PodWorkload{Ref: o, Namespace: p.Namespace, ID: id, Group: g})
		}
		t.Of[i] = e
		if ctl != nil && via == "" && (ctl.Kind != "ReplicaSet" || o.Kind == "Deployment") {
			// Followed through the objects (a ReplicaSet to its
			// Deployment), or a kind whose answer rests on the namespace
			// and the reference alone: the next pod with both shares it.
			prevNS, prevCtl, prevEntry = p.Namespace, ctl, e
		}
	}
	t.Groups = len(t.groupOf)
	return t
}

// controllerRef is the first owner reference marked controller, as
// WorkloadVia reads it, or nil.
func controllerRef(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if c := refs[i].Controller; c != nil && *c {
			return &refs[i]
		}
	}
	return nil
}

func sameRef(a, b *metav1.OwnerReference) bool {
	return a.UID == b.UID && a.Name == b.Name && a.Kind == b.Kind && a.APIVersion == b.APIVersion
}

// sharedCache holds the tables of each snapshot index, keyed weakly: an
// index (and its snapshot) no longer used by anyone drops its tables.
// The key is the index, not the snapshot, because Restrict and Drop
// change the snapshot's pods and build a new index.
var sharedCache sync.Map // weak.Pointer[snapshot.Index] → *sharedTables

// sharedTables are the tables of one index, each built on first use.
type sharedTables struct {
	workloadsOnce sync.Once
	workloads     *PodWorkloads
	nodesOnce     sync.Once
	nodes         []int32
}

func tablesOf(s *snapshot.Snapshot) *sharedTables {
	ix := s.Index()
	key := weak.Make(ix)
	v, ok := sharedCache.Load(key)
	if !ok {
		var loaded bool
		v, loaded = sharedCache.LoadOrStore(key, &sharedTables{})
		if !loaded {
			runtime.AddCleanup(ix, func(k weak.Pointer[snapshot.Index]) { sharedCache.Delete(k) }, key)
		}
	}
	return v.(*sharedTables)
}

// PodWorkloadsOf is s's table, built on the first call for s's current
// index and shared by every later one.
func PodWorkloadsOf(s *snapshot.Snapshot) *PodWorkloads {
	t := tablesOf(s)
	t.workloadsOnce.Do(func() { t.workloads = BuildPodWorkloads(s) })
	if len(t.workloads.Of) != len(s.Pods) {
		// The pods changed under the same index (nothing in kubegap does
		// this): never answer from a table of other pods.
		return BuildPodWorkloads(s)
	}
	return t.workloads
}

// PodNodesOf is, for each pod of s by position, the position in s.Nodes
// of the node it is bound to (the index's node of that name, the last of
// a repeated name), or -1 for a pod bound to no node or to a node not in
// the input. Built once per index and shared like PodWorkloadsOf: a
// check that keeps per-node state in a slice by node position reads it
// instead of hashing every pod's spec.nodeName into a map of nodes,
// which at 50,000 nodes no longer stays in the CPU caches.
func PodNodesOf(s *snapshot.Snapshot) []int32 {
	t := tablesOf(s)
	t.nodesOnce.Do(func() { t.nodes = BuildPodNodes(s) })
	if len(t.nodes) != len(s.Pods) {
		return BuildPodNodes(s)
	}
	return t.nodes
}

// BuildPodNodes works PodNodesOf's table out, without the cache: node by
// node, through the index's pods of each node name (a lookup per node,
// where one per pod, in a map of 50,000 names at 1M pods, missed the
// caches every time); a name two nodes share goes to the later one, as
// the index's Node does.
func BuildPodNodes(s *snapshot.Snapshot) []int32 {
	ix := s.Index()
	out := make([]int32, len(s.Pods))
	for i := range out {
		out[i] = -1
	}
	for n := range s.Nodes {
		for _, p := range ix.PodsOnNode(s.Nodes[n].Name) {
			if i := PodPosition(s, p); i >= 0 {
				out[i] = int32(n)
			}
		}
	}
	return out
}

// PodPosition is the position in s.Pods of the pod p points to, or -1
// when p does not point into s.Pods: the index of a per-pod slice, where
// a map keyed by the pod's pointer costs a hash and a probe per pod.
func PodPosition(s *snapshot.Snapshot, p *snapshot.Pod) int {
	if len(s.Pods) == 0 || p == nil {
		return -1
	}
	// Addresses compared as numbers, never turned back into pointers.
	base, at := uintptr(unsafe.Pointer(&s.Pods[0])), uintptr(unsafe.Pointer(p))
	size := unsafe.Sizeof(s.Pods[0])
	if at < base || (at-base)%size != 0 || (at-base)/size >= uintptr(len(s.Pods)) {
		return -1
	}
	return int((at - base) / size)
}
