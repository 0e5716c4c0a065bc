package snapshot

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Pod is what kubegap keeps of a pod. Pods are by far the most numerous
// objects, and a corev1.Pod is 1,240 bytes before a single container is
// added, so the snapshot holds this projection instead: every byte kept per
// pod is 100 MB at 100k pods. Field names and types follow corev1.Pod, so
// that p.Spec.NodeName or p.Status.Phase read as they do there. A check
// that needs a pod field not here adds it here, in keepPod and in
// (*Pod).Object; a field of SharedPodMeta or SharedPodSpec also in the
// interner's podMeta or podSpec key (TestPodMetaKeyCoversSharedPodMeta and
// TestPodSpecKeyCoversSharedPodSpec say so).
//
// Dropped, besides what trimMeta drops: the start time, probes, ports,
// commands, environment variables, security contexts, affinity,
// tolerations, volumes other than hostPath, condition messages (but the
// scheduler's, on PodScheduled=False), condition probe times and every
// condition that is True other than Ready.
type Pod struct {
	Name              string
	UID               PodUID
	CreationTimestamp metav1.Time
	// SharedPodMeta is shared between pods with equal ones (the pods of
	// one owner, not being deleted): read only. Reading a pod's namespace
	// is p.Namespace as in corev1; a test that changes one pod's calls
	// Own first. The loader always sets it; Snapshot.Finish sets it on
	// pods built by hand without one.
	*SharedPodMeta

	Spec   PodSpec
	Status PodStatus
}

// SharedPodMeta is the part of a pod's metadata the pods of one owner
// hold alike: 88 bytes a pod that are 88 MB at 1M pods, where shared they
// cost 8.
type SharedPodMeta struct {
	Namespace string
	// Labels is shared between pods with equal labels.
	Labels map[string]string
	// Annotations holds only the annotations trimMeta keeps.
	Annotations map[string]string
	// OwnerReferences is shared between pods with equal owner references.
	OwnerReferences   []metav1.OwnerReference
	DeletionTimestamp *metav1.Time
	// Finalizers are kept only for pods being deleted, where they say what
	// holds a pod that outlives its grace period.
	Finalizers []string
}

// emptySharedPodMeta is the metadata of pods built by hand without one:
// read only.
var emptySharedPodMeta = &SharedPodMeta{}

// Own gives p a copy of its shared metadata, so that changing it changes
// this pod only: for tests and benchmarks that plant a gap in a pod.
func (p *Pod) Own() { p.SharedPodMeta = ownCopy(p.SharedPodMeta) }

// PodSpec is what kubegap keeps of a pod's spec: the node it is bound
// to, which is the pod's own, and the rest, which the pods of one template
// hold alike and so share.
type PodSpec struct {
	NodeName string
	// SharedPodSpec is shared between pods with equal ones (the pods of
	// one template): read only. Reading a pod's containers is
	// p.Spec.Containers as in corev1; a test that changes one pod's calls
	// Own first. The loader always sets it; Snapshot.Finish sets it on
	// pods built by hand without one.
	*SharedPodSpec
}

// SharedPodSpec is the part of a pod's spec its template decides: every
// field of the spec but the node name. At 1M pods the 144 bytes it would
// cost each pod are 144 MB; shared, its copies number the templates.
type SharedPodSpec struct {
	ServiceAccountName string
	PriorityClassName  string
	Priority           *int32
	HostNetwork        bool
	// LocalStorage is true when the pod has an emptyDir volume, whose data
	// a drain deletes: kubectl drain refuses such pods without
	// --delete-emptydir-data.
	LocalStorage bool
	// Containers of each kind: name, image, pull policy and the mounts of
	// hostPath volumes.
	InitContainers      []Container
	Containers          []Container
	EphemeralContainers []Container
	// Volumes holds the hostPath volumes only.
	Volumes []HostPathVolume
}

// emptySharedPodSpec is the shared spec of pods that have none: read only.
var emptySharedPodSpec = &SharedPodSpec{}

// Own gives s a copy of its shared part, so that changing it changes this
// pod only: for tests and benchmarks that plant a gap in a loaded pod.
func (s *PodSpec) Own() { s.SharedPodSpec = ownCopy(s.SharedPodSpec) }

// Container is what kubegap keeps of a container.
type Container struct {
	Name            string
	Image           string
	ImagePullPolicy corev1.PullPolicy
	// VolumeMounts are the mounts of hostPath volumes.
	VolumeMounts []corev1.VolumeMount
	// Resources are the container's CPU and memory requests and limits.
	Resources Resources
	// LivenessProbe is kept for static (mirror) pods in kube-system only,
	// the control plane's own containers, whose probes have no template
	// to read them from; nil for every other pod, which keeps the
	// projection small.
	LivenessProbe *corev1.Probe
	// Command and Args are kept for the same static pods only: the
	// control plane's flags (etcd's --quota-backend-bytes) are there and
	// nowhere else in the API.
	Command, Args []string
}

// Resources are a container's CPU (millicores) and memory (bytes) requests
// and limits; 0 means not set. Four numbers instead of corev1's maps: pods
// are many.
type Resources struct {
	CPURequest, CPULimit       int64
	MemoryRequest, MemoryLimit int64
}

func keepResources(r corev1.ResourceRequirements) Resources {
	var out Resources
	if q, ok := r.Requests[corev1.ResourceCPU]; ok {
		out.CPURequest = q.MilliValue()
	}
	if q, ok := r.Limits[corev1.ResourceCPU]; ok {
		out.CPULimit = q.MilliValue()
	}
	if q, ok := r.Requests[corev1.ResourceMemory]; ok {
		out.MemoryRequest = q.Value()
	}
	if q, ok := r.Limits[corev1.ResourceMemory]; ok {
		out.MemoryLimit = q.Value()
	}
	return out
}

// Requirements turns r back into corev1's form.
func (r Resources) Requirements() corev1.ResourceRequirements {
	var out corev1.ResourceRequirements
	set := func(l *corev1.ResourceList, name corev1.ResourceName, q *resource.Quantity) {
		if *l == nil {
			*l = corev1.ResourceList{}
		}
		(*l)[name] = *q
	}
	if r.CPURequest > 0 {
		set(&out.Requests, corev1.ResourceCPU, resource.NewMilliQuantity(r.CPURequest, resource.DecimalSI))
	}
	if r.CPULimit > 0 {
		set(&out.Limits, corev1.ResourceCPU, resource.NewMilliQuantity(r.CPULimit, resource.DecimalSI))
	}
	if r.MemoryRequest > 0 {
		set(&out.Requests, corev1.ResourceMemory, resource.NewQuantity(r.MemoryRequest, resource.BinarySI))
	}
	if r.MemoryLimit > 0 {
		set(&out.Limits, corev1.ResourceMemory, resource.NewQuantity(r.MemoryLimit, resource.BinarySI))
	}
	return out
}

// HostPathVolume is a hostPath volume of a pod.
type HostPathVolume struct {
	Name string
	Path string
	Type *corev1.HostPathType
}

// PodStatus is what kubegap keeps of a pod's status.
type PodStatus struct {
	Phase    corev1.PodPhase
	HostIP   string
	PodIP    string
	QOSClass corev1.PodQOSClass
	// Conditions holds Ready and every condition that is not True, without
	// messages (but for PodScheduled=False, whose message is the
	// scheduler's verdict): a healthy pod's other True conditions say
	// nothing Ready does not.
	Conditions        []PodCondition
	ContainerStatuses []ContainerStatus
	// UncommonPodStatus holds what most pods' statuses leave empty; pods
	// whose statuses hold none of it share one, read only. Reading it is
	// p.Status.Reason as in corev1; a test that sets one pod's calls Own
	// first. The loader always sets it; Snapshot.Finish sets it on pods
	// built by hand without one.
	*UncommonPodStatus
}

// UncommonPodStatus is the part of a pod's status most pods leave empty:
// 88 bytes a pod that is 88 MB at 1M pods.
type UncommonPodStatus struct {
	Reason                     string
	Message                    string
	NominatedNodeName          string
	InitContainerStatuses      []ContainerStatus
	EphemeralContainerStatuses []ContainerStatus
}

// noUncommonPodStatus is shared by the pods whose statuses hold none of
// UncommonPodStatus: read only.
var noUncommonPodStatus = &UncommonPodStatus{}

// Own gives s a copy of its uncommon part, so that changing it changes
// this pod only: for tests and benchmarks that plant a gap in a pod.
func (s *PodStatus) Own() { s.UncommonPodStatus = ownCopy(s.UncommonPodStatus) }

// PodCondition is what kubegap keeps of a pod condition: corev1's without
// the probe time and the observed generation, which no check reads; 88
// bytes instead of 120, and most pods keep one (Ready).
type PodCondition struct {
	Type               corev1.PodConditionType
	Status             corev1.ConditionStatus
	Reason             string
	Message            string
	LastTransitionTime metav1.Time
}

// ContainerStatus is what kubegap keeps of a container's status. States
// keep no container IDs, and a running state no start time: no check reads
// one, and at 1M pods their own running states cost about 30 MB.
type ContainerStatus struct {
	Name                 string
	Image                string
	ImageID              string
	Started              *bool
	RestartCount         int32
	Ready                bool // beside RestartCount: 8 bytes less a status
	State                corev1.ContainerState
	LastTerminationState corev1.ContainerState
}

// keepPod projects a decoded pod onto Pod, sharing repeated strings, label
// sets and pointers through in.
func keepPod(p *corev1.Pod, in *interner) Pod {
	m := &p.ObjectMeta
	kept := Pod{Name: in.keep(m.Name), UID: MakePodUID(m.UID), CreationTimestamp: m.CreationTimestamp}
	meta := SharedPodMeta{
		Namespace: in.str(m.Namespace), Labels: in.labelSet(m.Labels), Annotations: in.labelSet(keptAnnotationsOf(m.Annotations)),
		DeletionTimestamp: m.DeletionTimestamp,
	}
	if m.DeletionTimestamp != nil && len(m.Finalizers) > 0 {
		meta.Finalizers = make([]string, len(m.Finalizers))
		for i, f := range m.Finalizers {
			meta.Finalizers[i] = in.str(f)
		}
	}
	if len(m.OwnerReferences) > 0 {
		refs := make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i, o := range m.OwnerReferences {
			refs[i] = metav1.OwnerReference{
				APIVersion: in.str(o.APIVersion), Kind: in.str(o.Kind), Name: in.str(o.Name), UID: types.UID(in.str(string(o.UID))),
				Controller: in.boolPtr(o.Controller), BlockOwnerDeletion: in.boolPtr(o.BlockOwnerDeletion),
			}
		}
		meta.OwnerReferences = in.ownerRefs(refs)
	}
	kept.SharedPodMeta = in.podMeta(&meta)

	s := &p.Spec
	sh := SharedPodSpec{
		HostNetwork:        s.HostNetwork,
		ServiceAccountName: in.str(s.ServiceAccountName), PriorityClassName: in.str(s.PriorityClassName),
		Priority: s.Priority,
	}
	var hostPaths map[string]bool
	vols := in.vols[:0]
	for _, v := range s.Volumes {
		if v.EmptyDir != nil {
			sh.LocalStorage = true
		}
		if v.HostPath != nil {
			if hostPaths == nil {
				hostPaths = map[string]bool{}
			}
			hostPaths[v.Name] = true
			vols = append(vols, HostPathVolume{Name: in.str(v.Name), Path: in.str(v.HostPath.Path), Type: v.HostPath.Type})
		}
	}
	in.vols = vols
	sh.Volumes = in.hostPathVolumes(vols)
	sh.InitContainers = in.podContainers(keepContainers(s.InitContainers, hostPaths, in))
	sh.Containers = keepContainers(s.Containers, hostPaths, in)
	if IsControlPlaneStaticPod(m.Namespace, m.Annotations) {
		for i := range sh.Containers {
			sh.Containers[i].LivenessProbe = s.Containers[i].LivenessProbe
			sh.Containers[i].Command, sh.Containers[i].Args = s.Containers[i].Command, s.Containers[i].Args
		}
	}
	sh.Containers = in.podContainers(sh.Containers)
	if len(s.EphemeralContainers) > 0 {
		sh.EphemeralContainers = make([]Container, len(s.EphemeralContainers))
		for i, e := range s.EphemeralContainers {
			sh.EphemeralContainers[i] = keepContainer((*corev1.Container)(&e.EphemeralContainerCommon), hostPaths, in)
		}
	}
	kept.Spec = PodSpec{NodeName: in.str(s.NodeName), SharedPodSpec: in.podSpec(&sh)}

	st := &p.Status
	kept.Status = PodStatus{
		Phase:  corev1.PodPhase(in.str(string(st.Phase))),
		HostIP: in.str(st.HostIP), PodIP: in.keep(st.PodIP),
		QOSClass:          corev1.PodQOSClass(in.str(string(st.QOSClass))),
		ContainerStatuses: keepContainerStatuses(st.ContainerStatuses, in),
		UncommonPodStatus: noUncommonPodStatus,
	}
	if st.Reason != "" || st.Message != "" || st.NominatedNodeName != "" ||
		len(st.InitContainerStatuses) > 0 || len(st.EphemeralContainerStatuses) > 0 {
		kept.Status.UncommonPodStatus = &UncommonPodStatus{
			Reason: in.str(st.Reason), Message: st.Message, NominatedNodeName: in.str(st.NominatedNodeName),
			InitContainerStatuses:      keepContainerStatuses(st.InitContainerStatuses, in),
			EphemeralContainerStatuses: keepContainerStatuses(st.EphemeralContainerStatuses, in),
		}
	}
	// Ready and every condition that is not True; built in scratch space
	// and cut from a slab (nil when none is kept).
	conds := in.conds[:0]
	for i := range st.Conditions {
		c := &st.Conditions[i]
		if c.Type != corev1.PodReady && c.Status == corev1.ConditionTrue {
			continue
		}
		kc := PodCondition{
			Type: corev1.PodConditionType(in.str(string(c.Type))), Status: corev1.ConditionStatus(in.str(string(c.Status))),
			Reason: in.str(c.Reason), LastTransitionTime: c.LastTransitionTime,
		}
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			// The scheduler's verdict ("0/7 nodes are available: ..."),
			// kept on the few pods it could not place: it proves why
			// they are Pending whatever else the input holds.
			kc.Message = c.Message
		}
		conds = append(conds, kc)
	}
	in.conds = conds
	kept.Status.Conditions = in.condSlab.clone(conds)
	return kept
}

func keepContainers(cs []corev1.Container, hostPaths map[string]bool, in *interner) []Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]Container, len(cs))
	for i := range cs {
		out[i] = keepContainer(&cs[i], hostPaths, in)
	}
	return out
}

func keepContainer(c *corev1.Container, hostPaths map[string]bool, in *interner) Container {
	return Container{Name: in.str(c.Name), Image: in.str(c.Image), ImagePullPolicy: corev1.PullPolicy(in.str(string(c.ImagePullPolicy))),
		VolumeMounts: hostPathMounts(c.VolumeMounts, hostPaths, in), Resources: keepResources(c.Resources)}
}

func keepContainerStatuses(cs []corev1.ContainerStatus, in *interner) []ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := in.statusScratch[:0]
	for _, c := range cs {
		image := in.str(c.Image)
		out = append(out, ContainerStatus{Name: in.str(c.Name), Image: image, ImageID: in.imageID(image, c.ImageID),
			Ready: c.Ready, Started: in.boolPtr(c.Started), RestartCount: c.RestartCount,
			State: trimState(c.State, in), LastTerminationState: trimState(c.LastTerminationState, in)})
	}
	in.statusScratch = out
	return in.containerStatuses(out)
}

// IsControlPlaneStaticPod reports whether a pod is a static pod's mirror
// in kube-system (kubeadm's etcd, kube-apiserver and the like): the pods
// whose liveness probes Pod keeps.
func IsControlPlaneStaticPod(namespace string, annotations map[string]string) bool {
	_, mirror := annotations["kubernetes.io/config.mirror"]
	return namespace == "kube-system" && mirror
}

// Object returns the pod as a corev1.Pod holding what Pod keeps, for
// writing snapshots.
func (p *Pod) Object() *corev1.Pod {
	out := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: Pods.APIVersion(), Kind: Pods.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: p.Name, Namespace: p.Namespace, UID: p.UID.UID(), Labels: p.Labels, Annotations: p.Annotations,
			OwnerReferences: p.OwnerReferences, CreationTimestamp: p.CreationTimestamp, DeletionTimestamp: p.DeletionTimestamp,
			Finalizers: p.Finalizers,
		},
		Spec: corev1.PodSpec{
			NodeName: p.Spec.NodeName, ServiceAccountName: p.Spec.ServiceAccountName,
			PriorityClassName: p.Spec.PriorityClassName, Priority: p.Spec.Priority, HostNetwork: p.Spec.HostNetwork,
			InitContainers: coreContainers(p.Spec.InitContainers),
			Containers:     coreContainers(p.Spec.Containers),
		},
		Status: corev1.PodStatus{
			Phase: p.Status.Phase, Reason: p.Status.Reason, Message: p.Status.Message,
			HostIP: p.Status.HostIP, PodIP: p.Status.PodIP, NominatedNodeName: p.Status.NominatedNodeName,
			QOSClass: p.Status.QOSClass, Conditions: corePodConditions(p.Status.Conditions),
			InitContainerStatuses:      coreContainerStatuses(p.Status.InitContainerStatuses),
			ContainerStatuses:          coreContainerStatuses(p.Status.ContainerStatuses),
			EphemeralContainerStatuses: coreContainerStatuses(p.Status.EphemeralContainerStatuses),
		},
	}
	for _, c := range p.Spec.EphemeralContainers {
		out.Spec.EphemeralContainers = append(out.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: c.Name, Image: c.Image,
				ImagePullPolicy: c.ImagePullPolicy, VolumeMounts: c.VolumeMounts}})
	}
	for _, v := range p.Spec.Volumes {
		out.Spec.Volumes = append(out.Spec.Volumes, corev1.Volume{Name: v.Name,
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: v.Path, Type: v.Type}}})
	}
	if p.Spec.LocalStorage {
		out.Spec.Volumes = append(out.Spec.Volumes, corev1.Volume{Name: "kubegap-local-storage",
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return out
}

func coreContainers(cs []Container) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image, ImagePullPolicy: c.ImagePullPolicy, VolumeMounts: c.VolumeMounts,
			Resources: c.Resources.Requirements(), LivenessProbe: c.LivenessProbe, Command: c.Command, Args: c.Args}
	}
	return out
}

func coreContainerStatuses(cs []ContainerStatus) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.ImageID, Ready: c.Ready,
			Started: c.Started, RestartCount: c.RestartCount, State: c.State, LastTerminationState: c.LastTerminationState}
	}
	return out
}

func corePodConditions(cs []PodCondition) []corev1.PodCondition {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.PodCondition, len(cs))
	for i, c := range cs {
		out[i] = corev1.PodCondition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message,
			LastTransitionTime: c.LastTransitionTime}
	}
	return out
}
