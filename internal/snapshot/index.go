package snapshot

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
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
// pod: its own controller, or, for a ReplicaSet the input holds, that
// ReplicaSet's controller (its Deployment). ok is false for a pod without
// a controller.
func (ix *Index) WorkloadOf(p *Pod) (ref metav1.OwnerReference, ok bool) {
	for _, o := range p.OwnerReferences {
		if o.Controller == nil || !*o.Controller {
			continue
		}
		if o.Kind == "ReplicaSet" && o.UID != "" {
			if rs := ix.ReplicaSet(o.UID); rs != nil {
				if ro := metav1.GetControllerOf(rs); ro != nil {
					return *ro, true
				}
			}
		}
		return o, true
	}
	return metav1.OwnerReference{}, false
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
	var out []*Pod
	for _, p := range ix.podsByNS[ns] {
		if sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// ReplicaSet returns the ReplicaSet with this UID, or nil.
func (ix *Index) ReplicaSet(uid types.UID) *appsv1.ReplicaSet { return ix.replicaSets[uid] }

// Deployment returns the Deployment with this UID, or nil.
func (ix *Index) Deployment(uid types.UID) *appsv1.Deployment { return ix.deployments[uid] }
