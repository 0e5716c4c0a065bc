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
	// Named resources are read object by object (one GET each of the names
	// NamesOf gives) instead of listed: for resources of which kubegap may
	// read only a few objects (ConfigMaps). A name that is not found is
	// known absent.
	Named bool
	// CountOnly resources are counted, never kept: only how many objects
	// there are matters to the checks (Dex AuthRequests, all Events), and
	// the objects themselves can be many and large. A live read asks for
	// one object (limit=1) and adds the server's remainingItemCount; the
	// count lands in Snapshot.Counts and the coverage's Count.
	CountOnly bool
	// NonResourceURL is set for an input that is a URL of the API server,
	// not a resource (APIServerMetrics): it is read with one GET of the
	// URL, and RBAC grants it as nonResourceURLs.
	NonResourceURL string
}

// NamesOf lists the objects, as namespace/name, that a Named resource is
// read as.
func NamesOf(r Resource) []string {
	if r.Named && r.Resource == "configmaps" && r.Group == "" {
		return NamedConfigMaps
	}
	return nil
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
	// Cilium's policies, read for the DNS rules that route pods' DNS
	// through the agent's proxy.
	CiliumNetworkPolicies = Resource{Group: "cilium.io", Version: "v2", Resource: "ciliumnetworkpolicies",
		Kind: "CiliumNetworkPolicy", Namespaced: true, Custom: true}
	CiliumClusterwideNetworkPolicies = Resource{Group: "cilium.io", Version: "v2", Resource: "ciliumclusterwidenetworkpolicies",
		Kind: "CiliumClusterwideNetworkPolicy", Custom: true}

	Jobs     = Resource{Group: "batch", Version: "v1", Resource: "jobs", Kind: "Job", Namespaced: true}
	CronJobs = Resource{Group: "batch", Version: "v1", Resource: "cronjobs", Kind: "CronJob", Namespaced: true}

	Ingresses       = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses", Kind: "Ingress", Namespaced: true}
	IngressClasses  = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "ingressclasses", Kind: "IngressClass"}
	NetworkPolicies = Resource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies",
		Kind: "NetworkPolicy", Namespaced: true}

	PersistentVolumes      = Resource{Version: "v1", Resource: "persistentvolumes", Kind: "PersistentVolume"}
	PersistentVolumeClaims = Resource{Version: "v1", Resource: "persistentvolumeclaims", Kind: "PersistentVolumeClaim", Namespaced: true}
	StorageClasses         = Resource{Group: "storage.k8s.io", Version: "v1", Resource: "storageclasses", Kind: "StorageClass"}
	CSIDrivers             = Resource{Group: "storage.k8s.io", Version: "v1", Resource: "csidrivers", Kind: "CSIDriver"}
	// CSINodes are one small object per node: the CSI drivers on it and
	// how many of each driver's volumes it can attach.
	CSINodes             = Resource{Group: "storage.k8s.io", Version: "v1", Resource: "csinodes", Kind: "CSINode"}
	CSIStorageCapacities = Resource{Group: "storage.k8s.io", Version: "v1", Resource: "csistoragecapacities",
		Kind: "CSIStorageCapacity", Namespaced: true}

	HorizontalPodAutoscalers = Resource{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers",
		Kind: "HorizontalPodAutoscaler", Namespaced: true}

	ClusterRoles        = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles", Kind: "ClusterRole"}
	ClusterRoleBindings = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings", Kind: "ClusterRoleBinding"}
	Roles               = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles", Kind: "Role", Namespaced: true}
	RoleBindings        = Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings", Kind: "RoleBinding", Namespaced: true}

	// APIServices and CRDs are read as unstructured objects: their typed
	// packages would pull kube-aggregator and apiextensions into the build.
	// CRDs keep no schemas (see trimCRD).
	APIServices = Resource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices",
		Kind: "APIService", Custom: true}
	CustomResourceDefinitions = Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions",
		Kind: "CustomResourceDefinition", Custom: true}

	// Custom resources of add-ons some checks understand; a CRD that is not
	// installed is not served, which a live read reports as none.
	CertManagerCertificates = Resource{Group: "cert-manager.io", Version: "v1", Resource: "certificates",
		Kind: "Certificate", Namespaced: true, Custom: true}
	KarpenterNodePools = Resource{Group: "karpenter.sh", Version: "v1", Resource: "nodepools", Kind: "NodePool", Custom: true}
	// Argo CD's Applications and ApplicationSets, trimmed to their
	// destinations, sync policies, generators and owners (see trimArgo).
	ArgoApplications = Resource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications",
		Kind: "Application", Namespaced: true, Custom: true}
	ArgoApplicationSets = Resource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets",
		Kind: "ApplicationSet", Namespaced: true, Custom: true}
	CalicoIPPools = Resource{Group: "crd.projectcalico.org", Version: "v1", Resource: "ippools", Kind: "IPPool", Custom: true}
	// Calico's BGP peerings (Kubernetes datastore), read for the node
	// selectors in spec.nodeSelector and spec.peerSelector.
	CalicoBGPPeers = Resource{Group: "crd.projectcalico.org", Version: "v1", Resource: "bgppeers", Kind: "BGPPeer", Custom: true}
	// system-upgrade-controller Plans (k3s, RKE2 and the tools built on
	// them), read for the node selector in spec.nodeSelector.
	UpgradePlans = Resource{Group: "upgrade.cattle.io", Version: "v1", Resource: "plans", Kind: "Plan", Namespaced: true, Custom: true}
	// Calico's IPAM block affinities (Kubernetes datastore mode): which node
	// holds each block of an IPPool.
	CalicoBlockAffinities = Resource{Group: "crd.projectcalico.org", Version: "v1", Resource: "blockaffinities",
		Kind: "BlockAffinity", Custom: true}
	// VerticalPodAutoscalers (the VPA add-on's CRD), read for their update
	// mode, target and container policies.
	VerticalPodAutoscalers = Resource{Group: "autoscaling.k8s.io", Version: "v1", Resource: "verticalpodautoscalers",
		Kind: "VerticalPodAutoscaler", Namespaced: true, Custom: true}
	// LimitRanges, read as unstructured objects (few and small) for the
	// type of each limit.
	LimitRanges = Resource{Version: "v1", Resource: "limitranges", Kind: "LimitRange", Namespaced: true, Custom: true}
	// Istio's EnvoyFilters, read for the filter names their patches match
	// and insert, and for the pre-1.6 spec.filters form.
	IstioEnvoyFilters = Resource{Group: "networking.istio.io", Version: "v1alpha3", Resource: "envoyfilters",
		Kind: "EnvoyFilter", Namespaced: true, Custom: true}
	// CertificateSigningRequests, read as unstructured objects and trimmed
	// to their signer, requestor and condition types (see trimCSR): the
	// request itself and any issued certificate go. Kubelets ask for their
	// client and serving certificates through them.
	CertificateSigningRequests = Resource{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests",
		Kind: "CertificateSigningRequest", Custom: true}
	// Strimzi's Kafka clusters, trimmed to where their metadata live (see
	// trimStrimziKafka): no listener, authentication or broker settings.
	StrimziKafkas = Resource{Group: "kafka.strimzi.io", Version: "v1beta2", Resource: "kafkas", Kind: "Kafka",
		Namespaced: true, Custom: true}
	// OpenShift's cluster-wide node configuration (one object, cluster),
	// read for spec.cgroupMode; served only on OpenShift and OKD.
	OpenShiftNodeConfigs = Resource{Group: "config.openshift.io", Version: "v1", Resource: "nodes", Kind: "Node", Custom: true}
	// KEDA's TriggerAuthentications and ClusterTriggerAuthentications,
	// trimmed to the pod identity provider they name (see trimKedaAuth):
	// no secret references, environment or vault settings.
	KedaTriggerAuthentications = Resource{Group: "keda.sh", Version: "v1alpha1", Resource: "triggerauthentications",
		Kind: "TriggerAuthentication", Namespaced: true, Custom: true}
	KedaClusterTriggerAuthentications = Resource{Group: "keda.sh", Version: "v1alpha1", Resource: "clustertriggerauthentications",
		Kind: "ClusterTriggerAuthentication", Custom: true}

	// Counted resources (see CountOnly). Dex keeps one AuthRequest per
	// login attempt in the cluster when its storage is "kubernetes"; all
	// Events are counted through events.k8s.io (the same objects as core
	// v1 Events, which are read for Warnings only).
	DexAuthRequests = Resource{Group: "dex.coreos.com", Version: "v1", Resource: "authrequests", Kind: "AuthRequest",
		Namespaced: true, Custom: true, CountOnly: true}
	EventCounts = Resource{Group: "events.k8s.io", Version: "v1", Resource: "events", Kind: "Event",
		Namespaced: true, Custom: true, CountOnly: true}
	// Cilium keeps one cluster-scoped CiliumIdentity per distinct set of
	// identity-relevant labels in CRD mode, from a range of about 65,000.
	CiliumIdentities = Resource{Group: "cilium.io", Version: "v2", Resource: "ciliumidentities", Kind: "CiliumIdentity",
		Custom: true, CountOnly: true}
	// Kyverno's intermediary policy reports, counted: written at
	// admission and by background scans, and consumed by its reports
	// controller to build PolicyReports. Kyverno 1.8 to 1.11 write
	// AdmissionReports (kyverno.io/v1alpha2); 1.12 replaced them, with the
	// background scan reports, by EphemeralReports (reports.kyverno.io/v1).
	// Only the namespaced kinds, the ones the cited clusters filled etcd
	// with, are counted (each counted kind is a coverage line when missing).
	KyvernoAdmissionReports = Resource{Group: "kyverno.io", Version: "v1alpha2", Resource: "admissionreports",
		Kind: "AdmissionReport", Namespaced: true, Custom: true, CountOnly: true}
	KyvernoEphemeralReports = Resource{Group: "reports.kyverno.io", Version: "v1", Resource: "ephemeralreports",
		Kind: "EphemeralReport", Namespaced: true, Custom: true, CountOnly: true}

	// ConfigMaps are never listed: only the few named in NamedConfigMaps are
	// read, one GET each, which deploy/rbac.yaml grants by resourceNames.
	// They hold public certificates and component settings, never secrets.
	ConfigMaps = Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, Named: true}
)

// NamedConfigMaps are the ConfigMaps kubegap reads, as namespace/name: the
// cluster CA bundle every namespace gets, service-mesh trust roots, the
// kube-proxy, CoreDNS and ingress-nginx settings, Flannel's and Canal's
// network configuration (net-conf.json) where the manifests put it, the
// descheduler's policy, cluster-autoscaler's status and Argo CD's command
// parameters.
var NamedConfigMaps = []string{
	"kube-system/kube-root-ca.crt",
	"kube-system/kube-proxy",
	// EKS's kube-proxy add-on reads its KubeProxyConfiguration from here
	// (aws/containers-roadmap#143).
	"kube-system/kube-proxy-config",
	"kube-system/coredns",
	"kube-flannel/kube-flannel-cfg",
	"kube-system/kube-flannel-cfg",
	"kube-system/canal-config",
	"istio-system/istio-ca-root-cert",
	"linkerd/linkerd-identity-trust-roots",
	// Dapr 1.12 and later publish Sentry's root here, in the namespace
	// Dapr's chart README installs into (dapr/dapr#6171).
	"dapr-system/dapr-trust-bundle",
	// ingress-nginx's settings (ssl-protocols, ssl-ciphers), under the name
	// its Helm chart and static manifests give it.
	"ingress-nginx/ingress-nginx-controller",
	// The descheduler's policy: the Helm chart's ConfigMap when the release
	// is named descheduler, and the plain manifests' one.
	"kube-system/descheduler",
	"kube-system/descheduler-policy-configmap",
	// cluster-autoscaler's status: each node group's minimum and maximum.
	"kube-system/cluster-autoscaler-status",
	// Argo CD's command parameters (the ApplicationSet controller's policy),
	// in the namespace Argo CD's install manifests use.
	"argocd/argocd-cmd-params-cm",
}

// Known lists every resource kubegap can read, in the order reports list them.
func Known() []Resource {
	return []Resource{
		Nodes, Namespaces, Pods, Services, Events,
		DaemonSets, Deployments, ReplicaSets, StatefulSets,
		PodDisruptionBudgets, EndpointSlices,
		ValidatingWebhookConfigurations, MutatingWebhookConfigurations,
		NetworkAttachmentDefinitions, CiliumNetworkPolicies, CiliumClusterwideNetworkPolicies,
		Jobs, CronJobs, Ingresses, IngressClasses, NetworkPolicies,
		PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSIDrivers, CSINodes, CSIStorageCapacities,
		HorizontalPodAutoscalers, VerticalPodAutoscalers, LimitRanges, IstioEnvoyFilters,
		ClusterRoles, ClusterRoleBindings, Roles, RoleBindings,
		APIServices, CustomResourceDefinitions, CertManagerCertificates, KarpenterNodePools, CalicoIPPools, CalicoBGPPeers, UpgradePlans, CalicoBlockAffinities, StrimziKafkas, OpenShiftNodeConfigs,
		KedaTriggerAuthentications, KedaClusterTriggerAuthentications,
		CertificateSigningRequests,
		ArgoApplications, ArgoApplicationSets,
		ConfigMaps, DexAuthRequests, EventCounts, CiliumIdentities,
		KyvernoAdmissionReports, KyvernoEphemeralReports,
		APIServerMetrics,
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
