package snapshot

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// SourceType says where a snapshot's objects came from.
type SourceType string

// Source types, as the JSON report names them.
const (
	SourceCluster  SourceType = "cluster"
	SourceFiles    SourceType = "files"
	SourceSnapshot SourceType = "snapshot"
	SourceDemo     SourceType = "demo"
)

// Source describes what was read.
type Source struct {
	Type SourceType `json:"type"`
	// Context is the kubeconfig context of a live read.
	Context string `json:"context,omitempty"`
	// Paths are the files or directories of an offline read.
	Paths []string `json:"paths,omitempty"`
	// ServerVersion is the API server's gitVersion (live), or what the
	// snapshot recorded. Empty for plain files.
	ServerVersion string `json:"serverVersion,omitempty"`
	// Scope is where the read looked.
	Scope Scope `json:"scope"`
	// ClusterInfo says what a kubectl cluster-info dump in the input
	// holds whole: observed, from the dump's own layout.
	ClusterInfo *ClusterInfoDump `json:"clusterInfoDump,omitempty"`
	// DeclaredComplete lists the resources, as coverage names them, that
	// the user declared complete across all namespaces (audit --complete,
	// --complete-kinds): taken on the user's word, not observed.
	DeclaredComplete []string `json:"declaredComplete,omitempty"`
	// Config names the config file the run read and what it changed; nil
	// when none was read.
	Config *ConfigUse `json:"config,omitempty"`
}

// ConfigUse is what a config file did to a run, so that a report never
// changes silently: a .kubegap.yaml found above the working directory
// is named with every effect it had.
type ConfigUse struct {
	// Path is the file as found (--config, the nearest .kubegap.yaml, or
	// the user's config.yaml).
	Path string `json:"path"`
	// Settings are the keys the file set that no flag overrode ("output",
	// "fail-on", "min-severity", "checks", "skip-checks").
	Settings []string `json:"settings,omitempty"`
	// SkippedChecks are the checks that would have run without the file.
	SkippedChecks []string `json:"skippedChecks,omitempty"`
	// Suppressions counts the file's suppressions entries; Suppressed the
	// findings they suppressed in this run.
	Suppressions int `json:"suppressions,omitempty"`
	Suppressed   int `json:"suppressed,omitempty"`
}

// Scope is where a read looked: every namespace, or only some. Objects of
// namespaced resources outside these namespaces are unknown, never absent.
type Scope struct {
	// Namespaces the read was limited to; empty means every namespace.
	Namespaces []string `json:"namespaces,omitempty"`
}

// AllNamespaces reports whether the scope is the whole cluster.
func (s Scope) AllNamespaces() bool { return len(s.Namespaces) == 0 }

// String is "all namespaces" or "namespace payments" / "namespaces a, b".
func (s Scope) String() string {
	switch len(s.Namespaces) {
	case 0:
		return "all namespaces"
	case 1:
		return "namespace " + s.Namespaces[0]
	}
	return "namespaces " + strings.Join(s.Namespaces, ", ")
}

// Status is how reading one resource went.
type Status string

// Coverage statuses.
const (
	StatusRead      Status = "read"
	StatusForbidden Status = "forbidden"
	StatusNotServed Status = "not-served"
	StatusError     Status = "error"
	// StatusNotInInput: offline input that holds no object of the resource.
	// Files cannot tell "none in the cluster" from "not dumped".
	StatusNotInInput Status = "not-in-input"
	// StatusNotRead: no enabled check needed it.
	StatusNotRead Status = "not-read"
)

// Coverage is how reading one resource went.
type Coverage struct {
	Resource string `json:"resource"`
	Status   Status `json:"status"`
	Count    int    `json:"count"`
	Message  string `json:"message,omitempty"`
	// Complete is true when the objects of the resource in the snapshot
	// are all there are in scope: a live read, a kubegap snapshot, a
	// recipe dump. Objects from plain files are present but not complete:
	// an object missing from them is unknown, not absent.
	Complete bool `json:"complete"`
	// Namespaces the read of a namespaced resource was limited to; empty
	// means every namespace (or a cluster-scoped resource).
	Namespaces []string `json:"namespaces,omitempty"`
}

// Snapshot is what checks read. Objects are trimmed (no managedFields, no
// environment variable values) and sorted by namespace and name. Checks must
// not modify it: several run over the same snapshot, and objects share
// equal parts (label sets, pods' containers and owner references,
// workloads' selectors, probes and resource lists, nodes' capacity), so a
// change to one object's part changes every object that shares it. A test
// that edits a loaded object gives it its own copy first (slices.Clone,
// maps.Clone).
type Snapshot struct {
	Source Source

	Nodes                           []corev1.Node
	Namespaces                      []corev1.Namespace
	Pods                            []Pod
	Services                        []corev1.Service
	Events                          []corev1.Event
	DaemonSets                      []appsv1.DaemonSet
	Deployments                     []appsv1.Deployment
	ReplicaSets                     []appsv1.ReplicaSet
	StatefulSets                    []appsv1.StatefulSet
	PodDisruptionBudgets            []policyv1.PodDisruptionBudget
	EndpointSlices                  []discoveryv1.EndpointSlice
	ValidatingWebhookConfigurations []admissionv1.ValidatingWebhookConfiguration
	MutatingWebhookConfigurations   []admissionv1.MutatingWebhookConfiguration
	Jobs                            []batchv1.Job
	CronJobs                        []batchv1.CronJob
	Ingresses                       []networkingv1.Ingress
	IngressClasses                  []networkingv1.IngressClass
	NetworkPolicies                 []networkingv1.NetworkPolicy
	PersistentVolumes               []corev1.PersistentVolume
	PersistentVolumeClaims          []corev1.PersistentVolumeClaim
	StorageClasses                  []storagev1.StorageClass
	CSIDrivers                      []storagev1.CSIDriver
	CSINodes                        []storagev1.CSINode
	CSIStorageCapacities            []storagev1.CSIStorageCapacity
	HorizontalPodAutoscalers        []autoscalingv2.HorizontalPodAutoscaler
	ClusterRoles                    []rbacv1.ClusterRole
	ClusterRoleBindings             []rbacv1.ClusterRoleBinding
	Roles                           []rbacv1.Role
	RoleBindings                    []rbacv1.RoleBinding
	// ConfigMaps holds only the NamedConfigMaps that exist.
	ConfigMaps []corev1.ConfigMap

	// Custom holds custom resources (and kinds kubegap does not know, from
	// files), keyed by apiVersion/kind, e.g. "k8s.cni.cncf.io/v1/NetworkAttachmentDefinition".
	Custom map[string][]unstructured.Unstructured

	// DeprecatedAPIRequests are the apiserver_requested_deprecated_apis
	// series of the API server's /metrics (APIServerMetrics), sorted.
	DeprecatedAPIRequests []DeprecatedAPIRequest
	// StorageSizes are the storage database size series of the same
	// /metrics, sorted.
	StorageSizes []StorageSize
	// WriteLatency are the single-object write latency series of the
	// same /metrics, sorted.
	WriteLatency []WriteLatency

	// Counts holds how many objects of each CountOnly resource there are
	// (in scope); their objects are never kept.
	Counts map[Resource]int

	coverage map[Resource]Coverage
	index    *Index
	// intern shares repeated strings while objects are added.
	intern interner
	// claims holds, per resource, how many objects the input said its list
	// will hold (Reserve): a list that fills up grows straight to its claim
	// (growClaimed) instead of by append's 1.25x steps.
	claims map[Resource]int
	// converted holds the objects the loader converted from an older API
	// version as it read them ("Kind/namespace/name"): in the input their
	// apiVersion is that version, which OriginalAPIVersionAnnotation now
	// records. An object that carried the annotation in the input already
	// (a snapshot kubegap wrote) is not here. Never saved.
	converted map[string]bool
}

// ConvertedOnLoad reports whether the loader converted this object from
// the version its OriginalAPIVersionAnnotation names, so that the input
// holds it in that version (its apiVersion field), rather than finding
// the annotation in the input.
func (s *Snapshot) ConvertedOnLoad(kind, namespace, name string) bool {
	return s.converted[kind+"/"+namespace+"/"+name]
}

func (s *Snapshot) noteConverted(kind string, obj any) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	if s.converted == nil {
		s.converted = map[string]bool{}
	}
	s.converted[kind+"/"+m.GetNamespace()+"/"+m.GetName()] = true
}

// New returns an empty snapshot of the given source.
func New(src Source) *Snapshot {
	return &Snapshot{Source: src, Custom: map[string][]unstructured.Unstructured{}, Counts: map[Resource]int{},
		coverage: map[Resource]Coverage{}}
}

// AddCount adds n to the count of a CountOnly resource.
func (s *Snapshot) AddCount(r Resource, n int) {
	if s.Counts == nil {
		s.Counts = map[Resource]int{}
	}
	s.Counts[r] += n
}

// SetCoverage records how reading r went. The objects are not marked
// complete: see SetComplete.
func (s *Snapshot) SetCoverage(r Resource, st Status, message string) {
	s.coverage[r] = Coverage{Resource: r.String(), Status: st, Message: message}
}

// SetComplete marks the objects of r as all there are: in the whole
// cluster, or, for a namespaced r read in some namespaces only, in those.
// Only a read that listed r whole may say so (a live read, a kubegap
// snapshot, a recipe dump); objects from plain files are never complete.
func (s *Snapshot) SetComplete(r Resource, namespaces []string) {
	c, ok := s.coverage[r]
	if !ok {
		c = Coverage{Resource: r.String(), Status: StatusRead}
	}
	c.Complete = true
	c.Namespaces = nil
	if r.Namespaced && len(namespaces) > 0 {
		c.Namespaces = append([]string(nil), namespaces...)
	}
	s.coverage[r] = c
}

// Status is how reading r went; StatusNotRead when nothing was recorded.
func (s *Snapshot) Status(r Resource) Coverage {
	c, ok := s.coverage[r]
	if !ok {
		return Coverage{Resource: r.String(), Status: StatusNotRead}
	}
	c.Count = s.Count(r)
	return c
}

// Coverage lists the coverage of every resource that was read or tried, in
// the order of Known.
func (s *Snapshot) Coverage() []Coverage {
	var out []Coverage
	for _, r := range Known() {
		if _, ok := s.coverage[r]; ok {
			out = append(out, s.Status(r))
		}
	}
	return out
}

// CustomObjects returns the custom resources of r.
func (s *Snapshot) CustomObjects(r Resource) []unstructured.Unstructured {
	return s.Custom[r.APIVersion()+"/"+r.Kind]
}

// Count is the number of objects of r in the snapshot.
func (s *Snapshot) Count(r Resource) int {
	if r == APIServerMetrics {
		return len(s.DeprecatedAPIRequests) + len(s.StorageSizes) + len(s.WriteLatency)
	}
	if r.CountOnly {
		return s.Counts[r]
	}
	if k, ok := kindFor(r); ok {
		return k.count(s)
	}
	return len(s.CustomObjects(r))
}

// Finish sorts every list by namespace and name, drops duplicates (the same
// object given twice keeps its last copy) and builds the index. Loaders call
// it once, after the last object is added.
func (s *Snapshot) Finish() {
	s.shareEmptyParts()
	for _, k := range kinds {
		k.finish(s)
	}
	for key, objs := range s.Custom {
		sort.SliceStable(objs, func(i, j int) bool {
			return lessNN(objs[i].GetNamespace(), objs[i].GetName(), objs[j].GetNamespace(), objs[j].GetName())
		})
		s.Custom[key] = dedupe(objs, func(o *unstructured.Unstructured) (string, string) { return o.GetNamespace(), o.GetName() })
	}
	s.index = buildIndex(s)
	s.intern = interner{} // the objects keep the shared strings; the tables can go
	s.claims = nil
}

// Index returns lookups over the snapshot's objects, built by Finish.
func (s *Snapshot) Index() *Index {
	if s.index == nil {
		s.shareEmptyParts()
		s.index = buildIndex(s)
	}
	return s.index
}

// shareEmptyParts gives the pods built by hand without shared metadata, a
// shared spec or an uncommon status the empty ones, so that p.Labels,
// p.Spec.Containers and p.Status.Reason read as empty for them as for a
// loaded pod without them.
func (s *Snapshot) shareEmptyParts() {
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.SharedPodMeta == nil {
			p.SharedPodMeta = emptySharedPodMeta
		}
		if p.Spec.SharedPodSpec == nil {
			p.Spec.SharedPodSpec = emptySharedPodSpec
		}
		if p.Status.UncommonPodStatus == nil {
			p.Status.UncommonPodStatus = noUncommonPodStatus
		}
	}
}

func lessNN(ns1, n1, ns2, n2 string) bool {
	if ns1 != ns2 {
		return ns1 < ns2
	}
	return n1 < n2
}

// dedupe drops all but the last of each run of objects with equal keys in a
// stably sorted slice.
func dedupe[T any](objs []T, key func(*T) (string, string)) []T {
	if len(objs) < 2 {
		return objs
	}
	out := objs[:0]
	for i := range objs {
		if i+1 < len(objs) {
			a, b := key(&objs[i])
			c, d := key(&objs[i+1])
			if a == c && b == d {
				continue
			}
		}
		out = append(out, objs[i])
	}
	return out
}

// AddCustom appends custom resources of r, trimmed, each with its size as
// read in AnnotationSerializedBytes.
func (s *Snapshot) AddCustom(r Resource, objs []unstructured.Unstructured) {
	if r.CountOnly {
		s.AddCount(r, len(objs))
		return
	}
	key := r.APIVersion() + "/" + r.Kind
	for i := range objs {
		noteWrittenAs(&objs[i], r.APIVersion())
		if raw, err := objs[i].MarshalJSON(); err == nil {
			noteSerializedBytes(&objs[i], len(raw))
		}
		trimMeta(&objs[i])
		trimCustom(&objs[i])
	}
	s.Custom[key] = append(s.Custom[key], objs...)
}

// Reserve makes room for n more objects of r, so that a reader who knows
// how many are coming (a LIST's remainingItemCount) fills one right-sized
// list instead of growing it page by page. Custom resources are unaffected.
func (s *Snapshot) Reserve(r Resource, n int) {
	if k, ok := kindFor(r); ok && n > 0 {
		k.reserve(s, n)
	}
}

// Merge appends every object of o to s. Lists s does not have yet are taken
// over from o without copying, so o must not be used afterwards. Call
// Finish after the last merge.
func (s *Snapshot) Merge(o *Snapshot) {
	for _, k := range kinds {
		k.merge(s, o)
	}
	for key, objs := range o.Custom {
		s.Custom[key] = append(s.Custom[key], objs...)
	}
	for r, n := range o.Counts {
		s.AddCount(r, n)
	}
	s.AddDeprecatedAPIRequests(o.DeprecatedAPIRequests...)
	s.AddStorageSizes(o.StorageSizes...)
	s.AddWriteLatency(o.WriteLatency...)
}

// Restrict limits the snapshot to some namespaces, as a live read with -n
// would have read it: objects of namespaced resources elsewhere are
// dropped, the source's scope says so, and a complete read stays complete
// only within those namespaces. Cluster-scoped objects are kept. Asking
// for a namespace outside a scoped snapshot's own scope is an error.
func (s *Snapshot) Restrict(namespaces []string) error {
	if len(namespaces) == 0 {
		return nil
	}
	if prev := s.Source.Scope.Namespaces; len(prev) > 0 {
		for _, ns := range namespaces {
			if !slices.Contains(prev, ns) {
				return fmt.Errorf("namespace %q is outside the input's scope (%s)", ns, s.Source.Scope)
			}
		}
	}
	keep := func(ns string) bool { return slices.Contains(namespaces, ns) }
	for _, k := range kinds {
		if k.res.Namespaced {
			k.restrict(s, keep)
		}
	}
	for key, objs := range s.Custom {
		s.Custom[key] = slices.DeleteFunc(objs, func(o unstructured.Unstructured) bool {
			return o.GetNamespace() != "" && !keep(o.GetNamespace())
		})
	}
	s.Source.Scope = Scope{Namespaces: slices.Clone(namespaces)}
	for r, c := range s.coverage {
		if !r.Namespaced {
			continue
		}
		if r.CountOnly {
			// A count cannot be split by namespace after the fact.
			delete(s.Counts, r)
			c = Coverage{Resource: r.String(), Status: StatusNotInInput,
				Message: "counted across namespaces; the count cannot be limited to " + s.Source.Scope.String()}
		} else if c.Complete && len(c.Namespaces) > 0 {
			// Complete only in some namespaces (a cluster-info dump): it
			// stays complete in those asked for that it covers.
			var kept []string
			for _, ns := range namespaces {
				if slices.Contains(c.Namespaces, ns) {
					kept = append(kept, ns)
				}
			}
			if len(kept) == 0 {
				c.Complete, c.Namespaces = false, nil
			} else {
				c.Namespaces = kept
			}
		} else if c.Complete {
			c.Namespaces = slices.Clone(namespaces)
		}
		s.coverage[r] = c
	}
	s.index = buildIndex(s)
	return nil
}

// Drop removes every object of r and records it as not in the input: the
// snapshot a read that never reached r would have made.
func (s *Snapshot) Drop(r Resource) {
	if k, ok := kindFor(r); ok {
		k.restrict(s, func(string) bool { return false })
	}
	delete(s.Custom, r.APIVersion()+"/"+r.Kind)
	delete(s.Counts, r)
	s.coverage[r] = Coverage{Resource: r.String(), Status: StatusNotInInput, Message: "the input holds no " + r.Kind + " objects"}
	s.index = buildIndex(s)
}

// EachObject calls fn with every object of the snapshot except pods and
// events (of which there are many and which nobody writes by hand), typed
// kinds first in the order of Known, then custom resources and kinds
// kubegap does not know, with their apiVersion and kind.
func (s *Snapshot) EachObject(fn func(apiVersion, kind string, obj metav1.Object)) {
	for _, k := range kinds {
		if k.res == Pods || k.res == Events {
			continue
		}
		_ = k.each(s, func(o runtime.Object) error {
			if m, ok := o.(metav1.Object); ok {
				fn(k.res.APIVersion(), k.res.Kind, m)
			}
			return nil
		})
	}
	for _, key := range slices.Sorted(maps.Keys(s.Custom)) {
		objs := s.Custom[key]
		for i := range objs {
			fn(objs[i].GetAPIVersion(), objs[i].GetKind(), &objs[i])
		}
	}
}
