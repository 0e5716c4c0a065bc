package snapshot

import "k8s.io/apimachinery/pkg/types"

// Annotations that suppress findings on an object. They survive trimming.
const (
	// IgnoreAnnotation lists the check IDs not to report on the object,
	// comma-separated ("*" for all).
	IgnoreAnnotation = "kubegap.dev/ignore"
	// IgnoreReasonAnnotation says why; reports show it.
	IgnoreReasonAnnotation = "kubegap.dev/ignore-reason"
)

// Meta is what suppressions match on: an object's labels and the
// annotations kept through trimming; and its UID, which report objects
// (-o policyreport) name where the input held it.
type Meta struct {
	Labels      map[string]string
	Annotations map[string]string
	UID         types.UID
}

// Meta finds an object by kind, namespace and name (binary search over the
// sorted lists Finish leaves for typed kinds) and returns its labels and
// kept annotations.
func (s *Snapshot) Meta(kind, namespace, name string) (Meta, bool) {
	for _, k := range kinds {
		if k.res.Kind == kind {
			return k.meta(s, namespace, name)
		}
	}
	for _, objs := range s.Custom {
		for i := range objs {
			if objs[i].GetKind() == kind && objs[i].GetNamespace() == namespace && objs[i].GetName() == name {
				return Meta{Labels: objs[i].GetLabels(), Annotations: objs[i].GetAnnotations(), UID: objs[i].GetUID()}, true
			}
		}
	}
	return Meta{}, false
}
