package snapshot

import "k8s.io/apimachinery/pkg/runtime/schema"

// Resource names one kind of object kubegap reads.
type Resource struct {
	Group      string
	Version    string
	Resource   string // plural, lowercase, as in the API path
	Kind       string
	Namespaced bool
	// Custom resources are read as unstructured objects, over JSON.
	Custom bool
	// FieldSelector narrows live LISTs, for resources where checks only read
	// a part (Warning events) and the whole would be large.
	FieldSelector string
}

// APIVersion is group/version, or version alone for the core group.
func (r Resource) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// String names the resource as coverage reports it: "apps/v1/daemonsets".
func (r Resource) String() string { return r.APIVersion() + "/" + r.Resource }

// GVR is the resource's GroupVersionResource.
func (r Resource) GVR() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// The resources kubegap can read. A check names the ones it needs; the live
// reader lists exactly the union of those.
var (
	Nodes                = Resource{Version: "v1", Resource: "nodes", Kind: "Node"}
	Namespaces           = Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace"}
	Pods                 = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true}
	Services             = Resource{Version: "v1", Resource: "services", Kind: "Service", Namespaced: true}
	Events               = Resource{Version: "v1", Resource: "events", Kind: "Event", Namespaced: true, FieldSelector: "type=Warning"}
	DaemonSets           = Resource{Group: "apps", Version: "v1", Resource: "daemonsets", Kind: "DaemonSet", Namespaced: true}
	Deployments          = Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true}
	ReplicaSets          = Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true}
	StatefulSets         = Resource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true}
	PodDisruptionBudgets = Resource{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets",
		Kind: "PodDisruptionBudget", Namespaced: true}
	EndpointSlices = Resource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices",
		Kind: "EndpointSlice", Namespaced: true}
	ValidatingWebhookConfigurations = Resource{Group: "admissionregistration.k8s.io", Version: "v1",
		Resource: "validatingwebhookconfigurations", Kind: "ValidatingWebhookConfiguration"}
	MutatingWebhookConfigurations = Resource{Group: "admissionregistration.k8s.io", Version: "v1",
		Resource: "mutatingwebhookconfigurations", Kind: "MutatingWebhookConfiguration"}
	NetworkAttachmentDefinitions = Resource{Group: "k8s.cni.cncf.io", Version: "v1",
		Resource: "network-attachment-definitions", Kind: "NetworkAttachmentDefinition", Namespaced: true, Custom: true}
)

// Known lists every resource kubegap can read, in the order reports list them.
func Known() []Resource {
	return []Resource{
		Nodes, Namespaces, Pods, Services, Events,
		DaemonSets, Deployments, ReplicaSets, StatefulSets,
		PodDisruptionBudgets, EndpointSlices,
		ValidatingWebhookConfigurations, MutatingWebhookConfigurations,
		NetworkAttachmentDefinitions,
	}
}

// ByGroupKind finds a known resource by API group and kind. Versions are not
// compared; the loader reads an object's version with resolveTyped, which
// also knows the removed versions of other groups (extensions/v1beta1).
func ByGroupKind(group, kind string) (Resource, bool) {
	for _, r := range Known() {
		if r.Group == group && r.Kind == kind {
			return r, true
		}
	}
	return Resource{}, false
}

// Parse finds a known resource by its String form or by its plural name.
func Parse(name string) (Resource, bool) {
	for _, r := range Known() {
		if r.String() == name || r.Resource == name {
			return r, true
		}
	}
	return Resource{}, false
}
