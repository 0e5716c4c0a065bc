package snapshot

import (
	"fmt"
	"slices"
	"sort"
	"unsafe"

	json "github.com/go-json-experiment/json"
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
	"k8s.io/apimachinery/pkg/runtime"
)

// kind is what the snapshot knows about one typed resource: where its
// objects live, how to decode, trim, sort and count them. The table below is
// the one place a new typed resource is wired in.
type kind struct {
	res    Resource
	count  func(*Snapshot) int
	finish func(*Snapshot)
	// NewList returns an empty typed list for a live LIST response.
	NewList func() runtime.Object
	// AddList appends a decoded list's items, trimmed, and returns how many.
	AddList func(s *Snapshot, list runtime.Object) int
	each    func(s *Snapshot, fn func(obj runtime.Object) error) error
	merge   func(dst, src *Snapshot)
	reserve func(s *Snapshot, n int)
	// restrict keeps only the objects in namespaces for which keep is true.
	restrict func(s *Snapshot, keep func(ns string) bool)
	// decodeJSON decodes one object; addDecoded trims and appends it. They
	// are apart so that a loader can decode many objects in parallel and
	// add them in order.
	decodeJSON func(raw []byte) (any, error)
	addDecoded func(s *Snapshot, obj any)
	// meta finds an object by namespace and name in the sorted list
	// Finish leaves and returns its labels and kept annotations.
	meta func(s *Snapshot, namespace, name string) (Meta, bool)
	// keyAt is the namespace and name of the i-th object, in the order
	// added until Finish sorts them.
	keyAt func(s *Snapshot, i int) (ns, name string)
}

var kinds = []kind{
	typed(Nodes, func(s *Snapshot) *[]corev1.Node { return &s.Nodes },
		func(l *corev1.NodeList) []corev1.Node { return l.Items }, trimNode),
	typed(Namespaces, func(s *Snapshot) *[]corev1.Namespace { return &s.Namespaces },
		func(l *corev1.NamespaceList) []corev1.Namespace { return l.Items }, nil),
	kindOf[corev1.Pod, corev1.PodList](Pods, func(s *Snapshot) *[]Pod { return &s.Pods },
		func(l *corev1.PodList) []corev1.Pod { return l.Items },
		func(s *Snapshot, p *corev1.Pod) Pod { return keepPod(p, &s.intern) },
		func(p *Pod) (string, string) { return p.Namespace, p.Name },
		func(p *Pod) runtime.Object { return p.Object() }),
	typed(Services, func(s *Snapshot) *[]corev1.Service { return &s.Services },
		func(l *corev1.ServiceList) []corev1.Service { return l.Items }, nil),
	typed(Events, func(s *Snapshot) *[]corev1.Event { return &s.Events },
		func(l *corev1.EventList) []corev1.Event { return l.Items }, nil),
	typed(DaemonSets, func(s *Snapshot) *[]appsv1.DaemonSet { return &s.DaemonSets },
		func(l *appsv1.DaemonSetList) []appsv1.DaemonSet { return l.Items },
		func(d *appsv1.DaemonSet, in *interner) {
			trimPodSpec(&d.Spec.Template.Spec)
			trimMeta(&d.Spec.Template.ObjectMeta)
			shareWorkload(&d.ObjectMeta, &d.Spec.Selector, in)
		}),
	typed(Deployments, func(s *Snapshot) *[]appsv1.Deployment { return &s.Deployments },
		func(l *appsv1.DeploymentList) []appsv1.Deployment { return l.Items },
		func(d *appsv1.Deployment, in *interner) {
			trimWorkloadTemplate(&d.Spec.Template, in)
			shareWorkload(&d.ObjectMeta, &d.Spec.Selector, in)
		}),
	typed(ReplicaSets, func(s *Snapshot) *[]appsv1.ReplicaSet { return &s.ReplicaSets },
		func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items }, trimReplicaSet),
	typed(StatefulSets, func(s *Snapshot) *[]appsv1.StatefulSet { return &s.StatefulSets },
		func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items },
		func(d *appsv1.StatefulSet, in *interner) {
			trimWorkloadTemplate(&d.Spec.Template, in)
			shareWorkload(&d.ObjectMeta, &d.Spec.Selector, in)
		}),
	typed(PodDisruptionBudgets, func(s *Snapshot) *[]policyv1.PodDisruptionBudget { return &s.PodDisruptionBudgets },
		func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items }, nil),
	typed(EndpointSlices, func(s *Snapshot) *[]discoveryv1.EndpointSlice { return &s.EndpointSlices },
		func(l *discoveryv1.EndpointSliceList) []discoveryv1.EndpointSlice { return l.Items }, nil),
	typed(ValidatingWebhookConfigurations,
		func(s *Snapshot) *[]admissionv1.ValidatingWebhookConfiguration {
			return &s.ValidatingWebhookConfigurations
		},
		func(l *admissionv1.ValidatingWebhookConfigurationList) []admissionv1.ValidatingWebhookConfiguration {
			return l.Items
		}, nil),
	typed(MutatingWebhookConfigurations,
		func(s *Snapshot) *[]admissionv1.MutatingWebhookConfiguration { return &s.MutatingWebhookConfigurations },
		func(l *admissionv1.MutatingWebhookConfigurationList) []admissionv1.MutatingWebhookConfiguration {
			return l.Items
		}, nil),
	typed(Jobs, func(s *Snapshot) *[]batchv1.Job { return &s.Jobs },
		func(l *batchv1.JobList) []batchv1.Job { return l.Items },
		func(j *batchv1.Job, in *interner) {
			trimWorkloadTemplate(&j.Spec.Template, in)
			shareWorkload(&j.ObjectMeta, &j.Spec.Selector, in)
		}),
	typed(CronJobs, func(s *Snapshot) *[]batchv1.CronJob { return &s.CronJobs },
		func(l *batchv1.CronJobList) []batchv1.CronJob { return l.Items },
		func(c *batchv1.CronJob, in *interner) { trimWorkloadTemplate(&c.Spec.JobTemplate.Spec.Template, in) }),
	typed(Ingresses, func(s *Snapshot) *[]networkingv1.Ingress { return &s.Ingresses },
		func(l *networkingv1.IngressList) []networkingv1.Ingress { return l.Items }, nil),
	typed(IngressClasses, func(s *Snapshot) *[]networkingv1.IngressClass { return &s.IngressClasses },
		func(l *networkingv1.IngressClassList) []networkingv1.IngressClass { return l.Items }, nil),
	typed(NetworkPolicies, func(s *Snapshot) *[]networkingv1.NetworkPolicy { return &s.NetworkPolicies },
		func(l *networkingv1.NetworkPolicyList) []networkingv1.NetworkPolicy { return l.Items }, nil),
	typed(PersistentVolumes, func(s *Snapshot) *[]corev1.PersistentVolume { return &s.PersistentVolumes },
		func(l *corev1.PersistentVolumeList) []corev1.PersistentVolume { return l.Items }, nil),
	typed(PersistentVolumeClaims, func(s *Snapshot) *[]corev1.PersistentVolumeClaim { return &s.PersistentVolumeClaims },
		func(l *corev1.PersistentVolumeClaimList) []corev1.PersistentVolumeClaim { return l.Items }, nil),
	typed(StorageClasses, func(s *Snapshot) *[]storagev1.StorageClass { return &s.StorageClasses },
		func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items }, nil),
	typed(CSIDrivers, func(s *Snapshot) *[]storagev1.CSIDriver { return &s.CSIDrivers },
		func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items }, nil),
	typed(CSINodes, func(s *Snapshot) *[]storagev1.CSINode { return &s.CSINodes },
		func(l *storagev1.CSINodeList) []storagev1.CSINode { return l.Items }, nil),
	typed(CSIStorageCapacities, func(s *Snapshot) *[]storagev1.CSIStorageCapacity { return &s.CSIStorageCapacities },
		func(l *storagev1.CSIStorageCapacityList) []storagev1.CSIStorageCapacity { return l.Items }, nil),
	typed(HorizontalPodAutoscalers, func(s *Snapshot) *[]autoscalingv2.HorizontalPodAutoscaler { return &s.HorizontalPodAutoscalers },
		func(l *autoscalingv2.HorizontalPodAutoscalerList) []autoscalingv2.HorizontalPodAutoscaler {
			return l.Items
		}, nil),
	typed(ClusterRoles, func(s *Snapshot) *[]rbacv1.ClusterRole { return &s.ClusterRoles },
		func(l *rbacv1.ClusterRoleList) []rbacv1.ClusterRole { return l.Items }, nil),
	typed(ClusterRoleBindings, func(s *Snapshot) *[]rbacv1.ClusterRoleBinding { return &s.ClusterRoleBindings },
		func(l *rbacv1.ClusterRoleBindingList) []rbacv1.ClusterRoleBinding { return l.Items }, nil),
	typed(Roles, func(s *Snapshot) *[]rbacv1.Role { return &s.Roles },
		func(l *rbacv1.RoleList) []rbacv1.Role { return l.Items }, nil),
	typed(RoleBindings, func(s *Snapshot) *[]rbacv1.RoleBinding { return &s.RoleBindings },
		func(l *rbacv1.RoleBindingList) []rbacv1.RoleBinding { return l.Items }, nil),
	typed(ConfigMaps, func(s *Snapshot) *[]corev1.ConfigMap { return &s.ConfigMaps },
		func(l *corev1.ConfigMapList) []corev1.ConfigMap { return l.Items }, keepNamedConfigMap),
}

// maxReserve bounds the bytes Reserve allocates for one resource's list
// before a single object arrives: 127k pods, 85k nodes, well above what
// most real clusters' lists need.
const maxReserve = 64 << 20

// claimTrust is how far a claimed count is trusted beyond the objects
// already read: once a list that Reserve sized fills up, it grows to its
// claim, but to at most claimTrust times the objects it holds. A snapshot
// of 1M or 2M pods grows its list once, from 127k straight to the count it
// recorded, instead of by append's 1.25x steps, each of which holds the old
// and the new array at once (at 1M pods the last step alone holds about
// 420 MB and 528 MB), and, when the count is right, ends with the array
// exactly as long as the pods it holds. A hostile claim still buys at most
// an array claimTrust times as long as the objects actually sent fill.
const claimTrust = 32

// growClaimed makes room in a full list for its claim (Snapshot.claims),
// within claimTrust times its length; append then fills it without
// copying. A list not full, or without a claim beyond its length, is left
// alone.
func growClaimed[S any](s *Snapshot, r Resource, list *[]S) {
	n := len(*list)
	if n < cap(*list) || n == 0 {
		return
	}
	if c := s.claims[r]; c > n {
		// Not slices.Grow, which may round up by append's 1.25x.
		grown := make([]S, n, min(c, claimTrust*n))
		copy(grown, *list)
		*list = grown
	}
}

func kindFor(r Resource) (kind, bool) {
	for _, k := range kinds {
		if k.res == r {
			return k, true
		}
	}
	return kind{}, false
}

// ListKind returns the typed list constructor and appender for a typed
// resource, for the live reader. ok is false for custom resources.
func ListKind(r Resource) (newList func() runtime.Object, add func(*Snapshot, runtime.Object) int, ok bool) {
	k, ok := kindFor(r)
	if !ok {
		return nil, nil, false
	}
	return k.NewList, k.AddList, true
}

// object is what every typed Kubernetes object pointer offers.
type object[T any] interface {
	*T
	metav1.Object
	runtime.Object
}

// typed is the kind of a resource kept as its own API type, trimmed by
// trimMeta and then by trim, which shares strings through the snapshot's
// interner.
func typed[T any, L any, PT object[T], PL interface {
	*L
	runtime.Object
}](res Resource, field func(*Snapshot) *[]T, items func(*L) []T, trim func(*T, *interner)) kind {
	gvk := schemaGVK(res)
	keep := func(s *Snapshot, o *T) T {
		noteWrittenAs(PT(o), res.APIVersion())
		trimMeta(PT(o))
		if trim != nil {
			trim(o, &s.intern)
		}
		PT(o).GetObjectKind().SetGroupVersionKind(gvk)
		return *o
	}
	return kindOf[T, L, T, PT, PL](res, field, items, keep,
		func(o *T) (string, string) { return PT(o).GetNamespace(), PT(o).GetName() },
		func(o *T) runtime.Object { return PT(o) })
}

// kindOf is the kind of a resource decoded as T, arriving in lists L, and
// kept in the snapshot as S (a projection of T, or T itself): keep turns a
// decoded object into what is kept, key names it and object turns it back
// into an API object for writing.
func kindOf[T any, L any, S any, PT object[T], PL interface {
	*L
	runtime.Object
}](res Resource, field func(*Snapshot) *[]S, items func(*L) []T,
	keep func(*Snapshot, *T) S, key func(*S) (ns, name string), object func(*S) runtime.Object) kind {
	return kind{
		res:   res,
		count: func(s *Snapshot) int { return len(*field(s)) },
		finish: func(s *Snapshot) {
			objs := *field(s)
			sort.SliceStable(objs, func(i, j int) bool {
				ns1, n1 := key(&objs[i])
				ns2, n2 := key(&objs[j])
				return lessNN(ns1, n1, ns2, n2)
			})
			*field(s) = dedupe(objs, key)
		},
		decodeJSON: func(raw []byte) (any, error) {
			o := new(T)
			if err := json.Unmarshal(raw, o); err != nil {
				return nil, fmt.Errorf("decoding %s: %w", res.Kind, err)
			}
			// Findings name objects; a nameless one is bad input (a
			// misspelt "Metadata:" key reads as no metadata at all).
			if PT(o).GetName() == "" && PT(o).GetGenerateName() == "" {
				return nil, fmt.Errorf("%s has no metadata.name", res.Kind)
			}
			// A manifest without a namespace lands in "default" when
			// applied; read it where the cluster would put it.
			if res.Namespaced && PT(o).GetNamespace() == "" {
				PT(o).SetNamespace(metav1.NamespaceDefault)
			}
			return o, nil
		},
		addDecoded: func(s *Snapshot, obj any) {
			growClaimed(s, res, field(s))
			*field(s) = append(*field(s), keep(s, obj.(*T)))
		},
		NewList: func() runtime.Object { return PL(new(L)) },
		AddList: func(s *Snapshot, list runtime.Object) int {
			l, ok := list.(PL)
			if !ok {
				return 0
			}
			objs := items((*L)(l))
			for i := range objs {
				growClaimed(s, res, field(s))
				*field(s) = append(*field(s), keep(s, &objs[i]))
			}
			return len(objs)
		},
		restrict: func(s *Snapshot, keepNS func(string) bool) {
			*field(s) = slices.DeleteFunc(*field(s), func(o S) bool {
				ns, _ := key(&o)
				return !keepNS(ns)
			})
		},
		merge: func(dst, src *Snapshot) {
			if len(*field(dst)) == 0 {
				// Take the list over rather than copy it: for 100k pods
				// a copy would hold two full lists at once. Clipped, so
				// that a later append to either cannot write into the other.
				*field(dst) = slices.Clip(*field(src))
				return
			}
			*field(dst) = append(*field(dst), *field(src)...)
		},
		reserve: func(s *Snapshot, n int) {
			// n is a claim made by the input (a snapshot's counts, a LIST's
			// remainingItemCount), not objects seen: trust it only as far
			// as maxReserve, so that a hostile claim of a billion objects
			// cannot exhaust memory before a single one arrives. Beyond
			// the bound, lists grow as objects are added.
			if s.claims == nil {
				s.claims = map[Resource]int{}
			}
			s.claims[res] = max(s.claims[res], len(*field(s))+n)
			n = min(n, maxReserve/int(unsafe.Sizeof(*new(S))))
			*field(s) = slices.Grow(*field(s), n)
		},
		keyAt: func(s *Snapshot, i int) (string, string) { return key(&(*field(s))[i]) },
		meta: func(s *Snapshot, namespace, name string) (Meta, bool) {
			objs := *field(s)
			i := sort.Search(len(objs), func(i int) bool {
				ns, n := key(&objs[i])
				return !lessNN(ns, n, namespace, name)
			})
			if i == len(objs) {
				return Meta{}, false
			}
			if ns, n := key(&objs[i]); ns != namespace || n != name {
				return Meta{}, false
			}
			o := object(&objs[i]).(metav1.Object)
			return Meta{Labels: o.GetLabels(), Annotations: o.GetAnnotations(), UID: o.GetUID()}, true
		},
		each: func(s *Snapshot, fn func(runtime.Object) error) error {
			objs := *field(s)
			for i := range objs {
				if err := fn(object(&objs[i])); err != nil {
					return err
				}
			}
			return nil
		},
	}
}
