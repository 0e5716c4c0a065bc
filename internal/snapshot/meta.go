package snapshot

import (
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Annotations that suppress findings on an object. They survive trimming.
const (
	// IgnoreAnnotation lists the check IDs not to report on the object,
	// comma-separated ("*" for all).
	IgnoreAnnotation = "kubegap.dev/ignore"
	// IgnoreReasonAnnotation says why; reports show it.
	IgnoreReasonAnnotation = "kubegap.dev/ignore-reason"
)

// Meta is what suppressions match on: an object's labels and the
// annotations kept through trimming.
type Meta struct {
	Labels      map[string]string
	Annotations map[string]string
}

// Meta finds an object by kind, namespace and name (binary search over the
// sorted lists Finish leaves) and returns its labels and kept annotations.
func (s *Snapshot) Meta(kind, namespace, name string) (Meta, bool) {
	switch kind {
	case "Pod":
		i := sort.Search(len(s.Pods), func(i int) bool {
			return !lessNN(s.Pods[i].Namespace, s.Pods[i].Name, namespace, name)
		})
		if i < len(s.Pods) && s.Pods[i].Namespace == namespace && s.Pods[i].Name == name {
			return Meta{Labels: s.Pods[i].Labels, Annotations: s.Pods[i].Annotations}, true
		}
		return Meta{}, false
	case Nodes.Kind:
		return findMeta(s.Nodes, namespace, name)
	case Namespaces.Kind:
		return findMeta(s.Namespaces, namespace, name)
	case Services.Kind:
		return findMeta(s.Services, namespace, name)
	case DaemonSets.Kind:
		return findMeta(s.DaemonSets, namespace, name)
	case Deployments.Kind:
		return findMeta(s.Deployments, namespace, name)
	case ReplicaSets.Kind:
		return findMeta(s.ReplicaSets, namespace, name)
	case StatefulSets.Kind:
		return findMeta(s.StatefulSets, namespace, name)
	case PodDisruptionBudgets.Kind:
		return findMeta(s.PodDisruptionBudgets, namespace, name)
	case ValidatingWebhookConfigurations.Kind:
		return findMeta(s.ValidatingWebhookConfigurations, namespace, name)
	case MutatingWebhookConfigurations.Kind:
		return findMeta(s.MutatingWebhookConfigurations, namespace, name)
	}
	for _, objs := range s.Custom {
		for i := range objs {
			if objs[i].GetKind() == kind && objs[i].GetNamespace() == namespace && objs[i].GetName() == name {
				return Meta{Labels: objs[i].GetLabels(), Annotations: objs[i].GetAnnotations()}, true
			}
		}
	}
	return Meta{}, false
}

func findMeta[T any, PT interface {
	*T
	metav1.Object
}](list []T, namespace, name string) (Meta, bool) {
	i := sort.Search(len(list), func(i int) bool {
		o := PT(&list[i])
		return !lessNN(o.GetNamespace(), o.GetName(), namespace, name)
	})
	if i < len(list) {
		o := PT(&list[i])
		if o.GetNamespace() == namespace && o.GetName() == name {
			return Meta{Labels: o.GetLabels(), Annotations: o.GetAnnotations()}, true
		}
	}
	return Meta{}, false
}
