package snapshot

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
)

// Index holds lookups over a snapshot's objects, built once so that checks
// over 100k pods do not each scan every list.
type Index struct {
	s           *Snapshot
	nodes       map[string]*corev1.Node
	namespaces  map[string]*corev1.Namespace
	podsByNode  map[string][]*Pod
	podsByNS    map[string][]*Pod
	podsByOwner map[OwnerID][]*Pod
	replicaSets map[types.UID]*appsv1.ReplicaSet
	deployments map[types.UID]*appsv1.Deployment
	// byName holds ReplicaSets, Deployments, Jobs and CronJobs by
	// kind/namespace/name, for the owners WorkloadVia follows or infers.
	byName map[[3]string]metav1.Object
	jobs   map[types.UID]*batchv1.Job

	// podsByLabel holds, by namespace and label key, the pods of the
	// namespace by that label's value, built the first time a selector
	// asks for the key (PodsMatching): a selector then costs the pods it
	// may match, not every pod of its namespace.
	labelMu     sync.Mutex
	podsByLabel map[[2]string]map[string][]*Pod
}

func buildIndex(s *Snapshot) *Index {
	ix := &Index{
		s:           s,
		nodes:       make(map[string]*corev1.Node, len(s.Nodes)),
		namespaces:  make(map[string]*corev1.Namespace, len(s.Namespaces)),
		podsByNode:  map[string][]*Pod{},
		podsByNS:    map[string][]*Pod{},
		podsByOwner: map[OwnerID][]*Pod{},
		replicaSets: make(map[types.UID]*appsv1.ReplicaSet, len(s.ReplicaSets)),
		deployments: make(map[types.UID]*appsv1.Deployment, len(s.Deployments)),
		byName:      make(map[[3]string]metav1.Object, len(s.ReplicaSets)+len(s.Deployments)+len(s.Jobs)+len(s.CronJobs)),
		jobs:        make(map[types.UID]*batchv1.Job, len(s.Jobs)),
	}
	for i := range s.Nodes {
		ix.nodes[s.Nodes[i].Name] = &s.Nodes[i]
	}
	for i := range s.Namespaces {
		ix.namespaces[s.Namespaces[i].Name] = &s.Namespaces[i]
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Spec.NodeName != "" {
			ix.podsByNode[p.Spec.NodeName] = append(ix.podsByNode[p.Spec.NodeName], p)
		}
		ix.podsByNS[p.Namespace] = append(ix.podsByNS[p.Namespace], p)
		for _, o := range p.OwnerReferences {
			if o.Controller != nil && *o.Controller {
				id := RefID(p.Namespace, o)
				ix.podsByOwner[id] = append(ix.podsByOwner[id], p)
			}
		}
	}
	for i := range s.ReplicaSets {
		if uid := s.ReplicaSets[i].UID; uid != "" {
			ix.replicaSets[uid] = &s.ReplicaSets[i]
		}
	}
	for i := range s.Deployments {
		if uid := s.Deployments[i].UID; uid != "" {
			ix.deployments[uid] = &s.Deployments[i]
		}
	}
	for i := range s.ReplicaSets {
		ix.byName[[3]string{"ReplicaSet", s.ReplicaSets[i].Namespace, s.ReplicaSets[i].Name}] = &s.ReplicaSets[i]
	}
	for i := range s.Deployments {
		ix.byName[[3]string{"Deployment", s.Deployments[i].Namespace, s.Deployments[i].Name}] = &s.Deployments[i]
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		ix.byName[[3]string{"Job", j.Namespace, j.Name}] = j
		if j.UID != "" {
			ix.jobs[j.UID] = j
		}
	}
	for i := range s.CronJobs {
		ix.byName[[3]string{"CronJob", s.CronJobs[i].Namespace, s.CronJobs[i].Name}] = &s.CronJobs[i]
	}
	return ix
}

// Node returns the node with the given name, or nil.
func (ix *Index) Node(name string) *corev1.Node { return ix.nodes[name] }

// Namespace returns the namespace with the given name, or nil.
func (ix *Index) Namespace(name string) *corev1.Namespace { return ix.namespaces[name] }

// PodsOnNode returns the pods bound to a node.
func (ix *Index) PodsOnNode(node string) []*Pod { return ix.podsByNode[node] }

// PodsInNamespace returns the pods of one namespace.
func (ix *Index) PodsInNamespace(ns string) []*Pod { return ix.podsByNS[ns] }

// PodsControlledBy returns the pods whose controller is owner.
func (ix *Index) PodsControlledBy(owner OwnerID) []*Pod { return ix.podsByOwner[owner] }

// WorkloadOf is the controller reference of the workload that made the
// pod; see WorkloadVia, which also says how the tie was made.
func (ix *Index) WorkloadOf(p *Pod) (ref metav1.OwnerReference, ok bool) {
	ref, _, ok = ix.WorkloadVia(p)
	return ref, ok
}

// WorkloadVia is the controller reference of the workload that made the
// pod: its own controller, followed up one level through a ReplicaSet
// (to its Deployment) or a Job (to its CronJob). The owner is followed
// through the object when the input holds it; when it does not, the tie
// is inferred from what the controllers guarantee, and via says how:
//
//   - the Deployment controller names each ReplicaSet
//     <deployment>-<pod-template-hash> and stamps that hash on the
//     pods' pod-template-hash label, so a pod of a missing ReplicaSet
//     belongs to the Deployment of the input whose name that leaves, if
//     the Deployment's selector selects the pod;
//   - the CronJob controller names each Job <cronjob>-<scheduled time in
//     minutes since the epoch>, so a pod of a missing Job belongs to the
//     CronJob of the input whose name that leaves;
//   - the Job controller labels its pods with the Job's name and UID
//     (batch.kubernetes.io/job-name and batch.kubernetes.io/controller-uid,
//     or the older job-name and controller-uid), so a pod without owner
//     references but with both labels belongs to that Job.
//
// via is "" when every step was read from the objects. ok is false for a
// pod without a controller.
func (ix *Index) WorkloadVia(p *Pod) (ref metav1.OwnerReference, via string, ok bool) {
	ref, ok = controllerOf(p.OwnerReferences)
	if !ok {
		ref, ok = jobFromLabels(p.Labels)
		if !ok {
			return metav1.OwnerReference{}, "", false
		}
		via = fmt.Sprintf("Job %s from the pod's job-name and controller-uid labels (the pod has no owner references)", ref.Name)
	}
	switch ref.Kind {
	case "ReplicaSet":
		if rs := ix.replicaSetOf(p.Namespace, ref); rs != nil {
			// controllerOf, not metav1.GetControllerOf: no copy per pod.
			if ro, ok := controllerOf(rs.OwnerReferences); ok {
				return ro, via, true
			}
			return ref, via, true
		}
		if d, why := ix.deploymentByHash(p, ref.Name); d != nil {
			return controllerRef("apps/v1", "Deployment", &d.ObjectMeta), joinVia(via, why), true
		}
	case "Job":
		if j := ix.jobOf(p.Namespace, ref); j != nil {
			if jo, ok := controllerOf(j.OwnerReferences); ok {
				return jo, via, true
			}
			return ref, via, true
		}
		if cj, why := ix.cronJobByName(p.Namespace, ref.Name); cj != nil {
			return controllerRef("batch/v1", "CronJob", cj), joinVia(via, why), true
		}
	}
	return ref, via, true
}

func controllerOf(refs []metav1.OwnerReference) (metav1.OwnerReference, bool) {
	for _, o := range refs {
		if o.Controller != nil && *o.Controller {
			return o, true
		}
	}
	return metav1.OwnerReference{}, false
}

func controllerRef(apiVersion, kind string, m metav1.Object) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: m.GetName(), UID: m.GetUID(), Controller: &yes}
}

func joinVia(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// jobFromLabels reads the labels the Job controller puts on its pods:
// both the Job's name and its UID must be there.
func jobFromLabels(l map[string]string) (metav1.OwnerReference, bool) {
	name, uid := l[batchv1.JobNameLabel], l[batchv1.ControllerUidLabel]
	if name == "" || uid == "" {
		name, uid = l["job-name"], l["controller-uid"]
	}
	if name == "" || uid == "" {
		return metav1.OwnerReference{}, false
	}
	yes := true
	return metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: name, UID: types.UID(uid), Controller: &yes}, true
}

func (ix *Index) replicaSetOf(ns string, ref metav1.OwnerReference) *appsv1.ReplicaSet {
	if ref.UID != "" {
		if rs := ix.replicaSets[ref.UID]; rs != nil {
			return rs
		}
	}
	if o, ok := ix.byName[[3]string{"ReplicaSet", ns, ref.Name}].(*appsv1.ReplicaSet); ok && (ref.UID == "" || o.UID == "" || o.UID == ref.UID) {
		return o
	}
	return nil
}

func (ix *Index) jobOf(ns string, ref metav1.OwnerReference) *batchv1.Job {
	if ref.UID != "" {
		if j := ix.jobs[ref.UID]; j != nil {
			return j
		}
	}
	if o, ok := ix.byName[[3]string{"Job", ns, ref.Name}].(*batchv1.Job); ok && (ref.UID == "" || o.UID == "" || o.UID == ref.UID) {
		return o
	}
	return nil
}

// deploymentByHash is the Deployment a pod of the missing ReplicaSet rs
// belongs to by the Deployment controller's naming, or nil.
func (ix *Index) deploymentByHash(p *Pod, rs string) (*appsv1.Deployment, string) {
	hash := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	name, found := strings.CutSuffix(rs, "-"+hash)
	if hash == "" || !found || name == "" {
		return nil, ""
	}
	d, ok := ix.byName[[3]string{"Deployment", p.Namespace, name}].(*appsv1.Deployment)
	if !ok {
		return nil, ""
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
		return nil, ""
	}
	return d, fmt.Sprintf("ReplicaSet %s is not in the input; its name is Deployment %s's and the pod's %s label %s, and the Deployment's selector selects the pod",
		rs, name, appsv1.DefaultDeploymentUniqueLabelKey, hash)
}

// minCronJobSuffix is the fewest digits a CronJob's Job name suffix has:
// minutes since the epoch have had 8 digits since 1989.
const minCronJobSuffix = 8

// cronJobByName is the CronJob that named the missing Job job, or nil.
func (ix *Index) cronJobByName(ns, job string) (*batchv1.CronJob, string) {
	i := strings.LastIndexByte(job, '-')
	if i <= 0 || len(job)-i-1 < minCronJobSuffix {
		return nil, ""
	}
	if _, err := strconv.ParseUint(job[i+1:], 10, 64); err != nil {
		return nil, ""
	}
	cj, ok := ix.byName[[3]string{"CronJob", ns, job[:i]}].(*batchv1.CronJob)
	if !ok {
		return nil, ""
	}
	return cj, fmt.Sprintf("Job %s is not in the input; CronJob %s names its Jobs <cronjob>-<scheduled minute since the epoch>", job, cj.Name)
}

// OwnerID names a controller as owner references do: by UID when there is
// one. Objects from hand-written files often have no UIDs; they are matched
// by kind, namespace and name instead, never under an empty UID (which
// would make every such pod belong to every such owner).
type OwnerID struct {
	UID                   types.UID
	Kind, Namespace, Name string
}

// IDOf is the OwnerID of an object of the given kind.
func IDOf(kind string, m *metav1.ObjectMeta) OwnerID {
	if m.UID != "" {
		return OwnerID{UID: m.UID}
	}
	return OwnerID{Kind: kind, Namespace: m.Namespace, Name: m.Name}
}

// RefID is the OwnerID an owner reference of an object in namespace ns
// points to (owners of namespaced objects live in the same namespace).
func RefID(ns string, r metav1.OwnerReference) OwnerID {
	if r.UID != "" {
		return OwnerID{UID: r.UID}
	}
	return OwnerID{Kind: r.Kind, Namespace: ns, Name: r.Name}
}

// PodsMatching returns the pods of a namespace that a label selector selects.
// A nil or empty selector selects nothing, as for PDBs and Services.
func (ix *Index) PodsMatching(ns string, sel labels.Selector) []*Pod {
	if sel == nil || sel.Empty() {
		return nil
	}
	candidates := ix.podsByNS[ns]
	var out []*Pod
	if key, value, ok := EqualityRequirement(sel); ok {
		candidates = ix.podsWithLabel(ns, key)[value]
		// Most pods with the label's value match the whole selector:
		// sized once, not grown pod by pod.
		if len(candidates) > 0 {
			out = make([]*Pod, 0, len(candidates))
		}
		if reqs, _ := sel.Requirements(); len(reqs) == 1 {
			// That requirement is the whole selector: every pod with the
			// label's value matches.
			return append(out, candidates...)
		}
	}
	for _, p := range candidates {
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// EqualityRequirement is a requirement of sel that one label equal one
// value, which every object sel matches must meet: a lookup by that label's
// value narrows the objects to match sel against.
func EqualityRequirement(sel labels.Selector) (key, value string, ok bool) {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
			if r.Values().Len() == 1 {
				return r.Key(), r.Values().UnsortedList()[0], true
			}
		}
	}
	return "", "", false
}

// podsWithLabel returns the pods of namespace ns that have label key, by
// its value, each list in the order of PodsInNamespace.
func (ix *Index) podsWithLabel(ns, key string) map[string][]*Pod {
	ix.labelMu.Lock()
	defer ix.labelMu.Unlock()
	if ix.podsByLabel == nil {
		ix.podsByLabel = map[[2]string]map[string][]*Pod{}
	}
	byValue, ok := ix.podsByLabel[[2]string{ns, key}]
	if !ok {
		byValue = map[string][]*Pod{}
		for _, p := range ix.podsByNS[ns] {
			if v, has := p.Labels[key]; has {
				byValue[v] = append(byValue[v], p)
			}
		}
		ix.podsByLabel[[2]string{ns, key}] = byValue
	}
	return byValue
}

// ReplicaSet returns the ReplicaSet with this UID, or nil.
func (ix *Index) ReplicaSet(uid types.UID) *appsv1.ReplicaSet { return ix.replicaSets[uid] }

// Deployment returns the Deployment with this UID, or nil.
func (ix *Index) Deployment(uid types.UID) *appsv1.Deployment { return ix.deployments[uid] }
