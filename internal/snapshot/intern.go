package snapshot

import (
	"hash/maphash"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	json "github.com/go-json-experiment/json"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// interner shares equal strings and equal label sets between the objects
// of one snapshot. Decoding gives every object its own copy of each string,
// yet in a large cluster most are repeats: namespaces, node and image
// names, label keys and values, condition types. A pod of a ReplicaSet has
// the same labels as its siblings. Checks never modify objects (see
// Snapshot), so sharing is safe. Not safe for concurrent use: each
// snapshot is filled by one goroutine.
type interner struct {
	strs map[string]string
	yes  *bool
	no   *bool
	// imageIDs holds the image IDs seen per image (see imageID).
	imageIDs map[string][]string
	// labels holds the label sets by their key's hash (see labelSet).
	labels    candidates[uint64, map[string]string]
	labelSeed maphash.Seed // made with labels
	labelKey  []byte
	keys      []string

	// buf holds the key being written for the tables below.
	buf        []byte
	containers map[string][]Container
	owners     map[string][]metav1.OwnerReference
	specs      map[specKey]*SharedPodSpec
	metas      map[metaKey]*SharedPodMeta
	statuses   map[uint64][]ContainerStatus
	statusSeed maphash.Seed // made with statuses
	// statusScratch and conds are scratch space for a pod's container
	// statuses and conditions.
	statusScratch []ContainerStatus
	conds         []PodCondition
	volumes       map[string][]HostPathVolume
	// vols is scratch space for a pod's hostPath volumes.
	vols      []HostPathVolume
	values    candidates[uint64, any]
	valueSeed maphash.Seed // made with values
	// templateContainers holds the workloads' trimmed containers by their
	// names and images.
	templateContainers candidates[string, []corev1.Container]

	// text holds the bytes of kept strings (see keep), and the slabs the
	// pods' own conditions and container statuses (see slab).
	text       []byte
	condSlab   slab[PodCondition]
	statusSlab slab[ContainerStatus]
}

// textChunk is the size of the chunks keep copies strings into.
const textChunk = 32 << 10

// keep returns a copy of s that shares a chunk with the other strings
// kept. Decoding allocates every string on its own, among the decoder's
// garbage of the same sizes: a string kept from it holds its span alive,
// mostly empty once the rest is collected (at 100k pods the heap's spans
// were 73-84% used), and takes its size class's bytes (a pod's 36-byte
// UID took 48). Copied together, the kept strings fill their chunks and
// the decoder's spans are freed whole. A chunk's bytes are never written
// once a string holds them; a long string gets a copy of its own.
func (in *interner) keep(s string) string {
	switch {
	case s == "":
		return ""
	case len(s) > textChunk/16:
		return strings.Clone(s)
	}
	if cap(in.text)-len(in.text) < len(s) {
		in.text = make([]byte, 0, textChunk)
	}
	n := len(in.text)
	in.text = append(in.text, s...)
	return unsafe.String(&in.text[n], len(s))
}

// slabLen is how many elements a slab's chunk holds.
const slabLen = 512

// A slab cuts the small slices many pods hold one each of from shared
// chunks, for the reasons keep copies strings: no size-class rounding (a
// pod condition is 88 bytes, its allocation 96) and no kept object amid
// garbage. Each slice it returns is capped at its length, so an append
// to one copies it instead of writing over its neighbour.
type slab[T any] struct{ free []T }

func (s *slab[T]) clone(v []T) []T {
	if len(v) == 0 {
		return nil
	}
	if cap(s.free)-len(s.free) < len(v) {
		s.free = make([]T, 0, max(slabLen, len(v)))
	}
	n := len(s.free)
	s.free = append(s.free, v...)
	return s.free[n:len(s.free):len(s.free)]
}

func (in *interner) str(s string) string {
	if s == "" {
		return ""
	}
	if in.strs == nil {
		in.strs = map[string]string{}
	}
	if c, ok := in.strs[s]; ok {
		return c
	}
	c := in.keep(s)
	in.strs[c] = c
	return c
}

// imageIDsPerImage is how many image IDs imageID remembers per image.
const imageIDsPerImage = 4

// imageID returns id, the image ID of a container running image, shared
// with the earlier containers of that image that had the same. An image
// has one ID wherever it runs, unless its tag moved between pulls, so the
// IDs are remembered per image, a few each, not in the table of all
// strings: an ID seen once (the benchmark generator gives every container
// its own) then costs no entry there.
func (in *interner) imageID(image, id string) string {
	if id == "" {
		return ""
	}
	if in.imageIDs == nil {
		in.imageIDs = map[string][]string{}
	}
	seen := in.imageIDs[image]
	for _, c := range seen {
		if c == id {
			return c
		}
	}
	c := in.keep(id)
	if len(seen) < imageIDsPerImage {
		in.imageIDs[image] = append(seen, c)
	}
	return c
}

// labelSet returns a map equal to m, shared with every earlier equal one.
func (in *interner) labelSet(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	in.keys = in.keys[:0]
	for k := range m {
		in.keys = append(in.keys, k)
	}
	slices.Sort(in.keys)
	key := in.labelKey[:0]
	for _, k := range in.keys {
		// NUL cannot occur in label keys or values.
		key = append(append(key, k...), 0)
		key = append(append(key, m[k]...), 0)
	}
	in.labelKey = key
	// Keyed by the key's hash, not the key: at 100k pods the keys of the
	// 35,000 distinct sets took 5 MB until the load ended. Sets whose
	// hashes collide are told apart by their contents.
	if in.labels == nil {
		in.labels, in.labelSeed = candidates[uint64, map[string]string]{}, maphash.MakeSeed()
	}
	h := maphash.Bytes(in.labelSeed, key)
	if c, ok := in.labels.find(h, func(c map[string]string) bool { return maps.Equal(c, m) }); ok {
		return c
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[in.str(k)] = in.str(v)
	}
	in.labels.add(h, c)
	return c
}

// boolPtr returns a shared pointer to *b's value, or nil: owner references
// and container statuses each hold one, and a pointer of their own costs 8
// bytes each.
func (in *interner) boolPtr(b *bool) *bool {
	switch {
	case b == nil:
		return nil
	case *b:
		if in.yes == nil {
			in.yes = new(bool)
			*in.yes = true
		}
		return in.yes
	default:
		if in.no == nil {
			in.no = new(bool)
		}
		return in.no
	}
}

// shared returns the value stored under the key in.buf holds, or v, stored
// there, when there is none: one copy of each equal slice or map a key
// names. The lookup with string(in.buf) does not allocate; only a new key
// is copied.
func shared[T any](m *map[string]T, buf []byte, v T) T {
	if *m == nil {
		*m = map[string]T{}
	}
	if c, ok := (*m)[string(buf)]; ok {
		return c
	}
	(*m)[string(buf)] = v
	return v
}

// candidates holds values under a key that equal values share and
// unequal ones may too (a hash, or containers' names and images): the
// tables that tell the values under one key apart by their contents.
type candidates[K comparable, T any] map[K][]T

// find returns the value stored under key that equal accepts.
func (c candidates[K, T]) find(key K, equal func(T) bool) (T, bool) {
	for _, v := range c[key] {
		if equal(v) {
			return v, true
		}
	}
	var none T
	return none, false
}

// add stores v under key, beside the values already there.
func (c candidates[K, T]) add(key K, v T) { c[key] = append(c[key], v) }

// The key writers below separate fields with NUL, which cannot occur in
// the names, images, paths and label keys they write, and end variable
// parts with a count, so that two different values never write one key.

func (in *interner) keyStr(s string) {
	in.buf = append(in.buf, s...)
	in.buf = append(in.buf, 0)
}

func (in *interner) keyInt(n int64) {
	in.buf = strconv.AppendInt(in.buf, n, 36)
	in.buf = append(in.buf, 0)
}

// podContainers returns a slice equal to cs, shared with every earlier
// equal one: the pods of one ReplicaSet, StatefulSet or DaemonSet have the
// same containers, and at 1M pods a slice of their own costs about 190 MB.
// Containers with a liveness probe (kept for control-plane static pods,
// few) are never shared.
func (in *interner) podContainers(cs []Container) []Container {
	if len(cs) == 0 {
		return nil
	}
	in.buf = in.buf[:0]
	for i := range cs {
		c := &cs[i]
		if c.LivenessProbe != nil {
			return cs
		}
		in.keyStr(c.Name)
		in.keyStr(c.Image)
		in.keyStr(string(c.ImagePullPolicy))
		in.keyInt(c.Resources.CPURequest)
		in.keyInt(c.Resources.CPULimit)
		in.keyInt(c.Resources.MemoryRequest)
		in.keyInt(c.Resources.MemoryLimit)
		for _, m := range c.VolumeMounts {
			in.keyStr(m.Name)
			in.keyStr(m.MountPath)
			in.keyStr(m.SubPath)
			in.keyStr(strconv.FormatBool(m.ReadOnly))
			if m.MountPropagation != nil || m.RecursiveReadOnly != nil || m.SubPathExpr != "" {
				return cs // hostPathMounts keeps none of these; a writer that does must not be shared
			}
		}
		in.keyInt(int64(len(c.VolumeMounts)))
		// Static pods keep their command and arguments (etcd's quota).
		for _, a := range c.Command {
			in.keyStr(a)
		}
		in.keyInt(int64(len(c.Command)))
		for _, a := range c.Args {
			in.keyStr(a)
		}
		in.keyInt(int64(len(c.Args)))
	}
	return shared(&in.containers, in.buf, cs)
}

// ownerRefs returns a slice equal to refs, shared with every earlier equal
// one: the pods of one owner all point to it alike.
func (in *interner) ownerRefs(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if len(refs) == 0 {
		return nil
	}
	in.buf = in.buf[:0]
	flag := func(b *bool) string {
		switch {
		case b == nil:
			return "-"
		case *b:
			return "t"
		}
		return "f"
	}
	for _, o := range refs {
		in.keyStr(o.APIVersion)
		in.keyStr(o.Kind)
		in.keyStr(o.Name)
		in.keyStr(string(o.UID))
		in.keyStr(flag(o.Controller))
		in.keyStr(flag(o.BlockOwnerDeletion))
	}
	return shared(&in.owners, in.buf, refs)
}

// shareContainers returns trimmed template containers equal to cs,
// shared. Trimmed, the containers of a Deployment's revisions, and of the
// many Deployments one chart makes in as many namespaces, are mostly the
// same: in the 100k-pod benchmark snapshot 7,076 Deployments and as many
// ReplicaSets hold 40 distinct lists, whose copies took 10 MB. Keyed by
// the containers' names and images, equality judged by DeepEqual: an
// encoding would cost more than the comparison. Readers must not change
// them.
func shareContainers(cs []corev1.Container, in *interner) []corev1.Container {
	if len(cs) == 0 {
		return cs
	}
	in.buf = in.buf[:0]
	for i := range cs {
		in.keyStr(cs[i].Name)
		in.keyStr(cs[i].Image)
	}
	if in.templateContainers == nil {
		in.templateContainers = candidates[string, []corev1.Container]{}
	}
	key := string(in.buf)
	if c, ok := in.templateContainers.find(key, func(c []corev1.Container) bool { return reflect.DeepEqual(c, cs) }); ok {
		return c
	}
	in.templateContainers.add(key, cs)
	return cs
}

// sharedJSON returns a value equal to v, shared with every earlier equal
// one of the same tag, equality judged by v's deterministic JSON: for the
// parts of workload templates and nodes (resource lists, probes, selectors)
// that repeat across objects but are too varied for a key of their own.
// Objects of these kinds number in the thousands, not millions, so the
// encoding's cost stays small. A value that does not encode is returned
// as it is. Equal JSON is not always equal values: omitempty leaves out a
// struct that encodes as {}, so that PreStopKept's lifecycle and none at
// all, or an empty nodeAffinity and none, encode alike. A value whose
// JSON matches one that is not deeply equal is kept beside it.
func sharedJSON[T any](in *interner, tag string, v T) T {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		return v
	}
	in.buf = append(append(append(in.buf[:0], tag...), 0), b...)
	// Keyed by the encoding's hash, not the encoding (at 100k pods 22,000
	// of them, 4 MB, until the load ended): DeepEqual decides anyway.
	if in.values == nil {
		in.values, in.valueSeed = candidates[uint64, any]{}, maphash.MakeSeed()
	}
	h := maphash.Bytes(in.valueSeed, in.buf)
	if c, ok := in.values.find(h, func(c any) bool { return reflect.DeepEqual(c, v) }); ok {
		return c.(T)
	}
	in.values.add(h, v)
	return v
}

// resourceList returns a list equal to l, shared.
func (in *interner) resourceList(l corev1.ResourceList) corev1.ResourceList {
	if len(l) == 0 {
		return l
	}
	return sharedJSON(in, "resources", l)
}

// labelSelector returns a selector equal to sel, shared.
func (in *interner) labelSelector(sel *metav1.LabelSelector) *metav1.LabelSelector {
	if sel == nil {
		return nil
	}
	return sharedJSON(in, "selector", sel)
}

// specKey says which shared specs are equal. Equal containers and equal
// volumes are one slice (podContainers, hostPathVolumes), so a slice's
// first element stands for its contents.
type specKey struct {
	serviceAccount, priorityClass string
	priority                      int64
	hasPriority, hostNetwork      bool
	localStorage                  bool
	init, containers              *Container
	volumes                       *HostPathVolume
	nInit, nContainers, nVolumes  int
}

// podSpec returns a spec equal to *s, shared with every earlier equal one,
// or a copy of its own when s has ephemeral containers (added to one pod
// by kubectl debug).
func (in *interner) podSpec(s *SharedPodSpec) *SharedPodSpec {
	if len(s.EphemeralContainers) > 0 {
		return ownCopy(s)
	}
	k := specKey{serviceAccount: s.ServiceAccountName, priorityClass: s.PriorityClassName,
		hostNetwork: s.HostNetwork, localStorage: s.LocalStorage,
		init: first(s.InitContainers), containers: first(s.Containers), volumes: first(s.Volumes),
		nInit: len(s.InitContainers), nContainers: len(s.Containers), nVolumes: len(s.Volumes)}
	if s.Priority != nil {
		k.hasPriority, k.priority = true, int64(*s.Priority)
	}
	return sharedCopy(&in.specs, k, s)
}

// hostPathVolumes returns a slice equal to vs, shared with every earlier
// equal one: the pods of one DaemonSet mount the same host paths. vs is
// not kept.
func (in *interner) hostPathVolumes(vs []HostPathVolume) []HostPathVolume {
	if len(vs) == 0 {
		return nil
	}
	in.buf = in.buf[:0]
	for _, v := range vs {
		in.keyStr(v.Name)
		in.keyStr(v.Path)
		if v.Type != nil {
			in.keyStr(string(*v.Type))
		} else {
			in.keyStr("-") // no type is not the type ""
		}
	}
	if c, ok := in.volumes[string(in.buf)]; ok {
		return c
	}
	if in.volumes == nil {
		in.volumes = map[string][]HostPathVolume{}
	}
	c := slices.Clone(vs) // vs may be the caller's scratch space
	in.volumes[string(in.buf)] = c
	return c
}

// metaKey says which shared metadata are equal. Equal label sets and
// equal owner references are one map and one slice (labelSet, ownerRefs),
// so their addresses stand for their contents.
type metaKey struct {
	namespace           string
	labels, annotations uintptr
	owners              *metav1.OwnerReference
	nOwners             int
}

// podMeta returns metadata equal to *m, shared with every earlier equal
// one, or a copy of its own for a pod being deleted, whose deletion time
// and finalizers are its own. Its maps must come from labelSet.
func (in *interner) podMeta(m *SharedPodMeta) *SharedPodMeta {
	if m.DeletionTimestamp != nil {
		return ownCopy(m)
	}
	k := metaKey{namespace: m.Namespace, labels: reflect.ValueOf(m.Labels).Pointer(),
		annotations: reflect.ValueOf(m.Annotations).Pointer(),
		owners:      first(m.OwnerReferences), nOwners: len(m.OwnerReferences)}
	return sharedCopy(&in.metas, k, m)
}

// sharedCopy returns the value stored under k, or a copy of *v, stored
// there, when there is none: podSpec's and podMeta's shared parts.
func sharedCopy[K comparable, T any](m *map[K]*T, k K, v *T) *T {
	if c, ok := (*m)[k]; ok {
		return c
	}
	if *m == nil {
		*m = map[K]*T{}
	}
	c := ownCopy(v)
	(*m)[k] = c
	return c
}

// ownCopy returns a new copy of *v, or of T's zero value when v is nil.
func ownCopy[T any](v *T) *T {
	c := new(T)
	if v != nil {
		*c = *v
	}
	return c
}

// first returns the address of s's first element, nil for an empty s: it
// stands for the contents of a slice the interner shares.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// containerStatuses returns a slice equal to cs, shared with every earlier
// equal one when no container in it is waiting or terminated now or was
// before: the healthy pods of one template, whose containers run the same
// images with the same restart counts, have equal statuses (a running
// state keeps no start time). Statuses with a waiting or terminated state,
// whose reasons, messages and times are a pod's own, are copied. cs is
// not kept.
func (in *interner) containerStatuses(cs []ContainerStatus) []ContainerStatus {
	in.buf = in.buf[:0]
	for i := range cs {
		c := &cs[i]
		if c.State.Waiting != nil || c.State.Terminated != nil ||
			c.LastTerminationState.Waiting != nil || c.LastTerminationState.Terminated != nil {
			return in.statusSlab.clone(cs)
		}
		in.keyStr(c.Name)
		in.keyStr(c.Image)
		in.keyStr(c.ImageID)
		switch {
		case c.Started == nil:
			in.keyStr("-")
		default:
			in.keyStr(strconv.FormatBool(*c.Started))
		}
		in.keyInt(int64(c.RestartCount))
		in.keyStr(strconv.FormatBool(c.Ready))
		in.keyStr(strconv.FormatBool(c.State.Running != nil))
		in.keyStr(strconv.FormatBool(c.LastTerminationState.Running != nil))
	}
	// Keyed by the key's hash, not the key, so that the statuses of a pod
	// of its own (the first of a template, or one whose restart count is
	// its own) cost no key string; a hash that collides keeps its copy.
	if in.statuses == nil {
		in.statuses, in.statusSeed = map[uint64][]ContainerStatus{}, maphash.MakeSeed()
	}
	h := maphash.Bytes(in.statusSeed, in.buf)
	if c, ok := in.statuses[h]; ok {
		if slices.EqualFunc(c, cs, sameRunningStatus) {
			return c
		}
		return in.statusSlab.clone(cs)
	}
	c := in.statusSlab.clone(cs)
	in.statuses[h] = c
	return c
}

// sameRunningStatus reports whether two statuses that are neither waiting
// nor terminated, now or before, are equal in every field the key of
// containerStatuses names.
func sameRunningStatus(a, b ContainerStatus) bool {
	return a.Name == b.Name && a.Image == b.Image && a.ImageID == b.ImageID &&
		(a.Started == nil) == (b.Started == nil) && (a.Started == nil || *a.Started == *b.Started) &&
		a.RestartCount == b.RestartCount && a.Ready == b.Ready &&
		(a.State.Running == nil) == (b.State.Running == nil) &&
		(a.LastTerminationState.Running == nil) == (b.LastTerminationState.Running == nil)
}
