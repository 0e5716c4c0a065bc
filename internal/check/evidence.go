package check

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/finding"
)

// Evidence items checks share: nodes grouped by the values of their
// fields, and the field paths of container images.

// NodeValues quotes fields of each node, nodes with the same values in
// one item, in the order of nodes.
func NodeValues(nodes []*corev1.Node, fields func(*corev1.Node) []finding.Field) []finding.EvidenceItem {
	var g finding.Grouper
	for _, n := range nodes {
		g.Add(NodeRef(n.Name), fields(n)...)
	}
	return g.Items()
}

// Container kinds, as a pod spec lists them.
const (
	Containers          = "containers"
	InitContainers      = "initContainers"
	EphemeralContainers = "ephemeralContainers"
)

// PodSpecPath is where an object of the kind keeps its pod spec: "spec"
// for a Pod, "spec.jobTemplate.spec.template.spec" for a CronJob,
// "spec.template.spec" for the other workloads.
func PodSpecPath(objectKind string) string {
	switch objectKind {
	case "Pod":
		return "spec"
	case "CronJob":
		return "spec.jobTemplate.spec.template.spec"
	}
	return "spec.template.spec"
}

// ContainerField is the path of a field of a named container of an
// object of the kind: "spec.template.spec.containers[name=app].image".
// containerKind is Containers, InitContainers or EphemeralContainers; ""
// is Containers.
func ContainerField(objectKind, containerKind, container, field string) string {
	if containerKind == "" {
		containerKind = Containers
	}
	return PodSpecPath(objectKind) + "." + containerKind + "[name=" + container + "]." + field
}

// ControllerFields quotes an object's controller owner (the kind and name
// of its ownerReference with controller true), or that it has none.
func ControllerFields(refs []metav1.OwnerReference) []finding.Field {
	const path = "metadata.ownerReferences[controller=true]"
	for _, o := range refs {
		if o.Controller != nil && *o.Controller {
			return []finding.Field{finding.Value(path+".kind", o.Kind), finding.Value(path+".name", o.Name)}
		}
	}
	return []finding.Field{finding.Absent(path)}
}
