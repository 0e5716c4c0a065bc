package snapshot

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Redacted replaces every environment variable value kubegap reads: it never
// keeps, saves or prints them.
const Redacted = "(redacted)"

// keptAnnotations are the annotations some check reads. All others are
// dropped on load: they are often large (last-applied-configuration holds
// whole manifests, environment values included) and no check needs them.
var keptAnnotations = map[string]bool{
	"k8s.v1.cni.cncf.io/networks":                    true, // Multus attachments of a pod
	"kubernetes.io/config.mirror":                    true, // static (mirror) pods
	"cluster-autoscaler.kubernetes.io/safe-to-evict": true,
}

func schemaGVK(r Resource) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// trimMeta drops what no check reads from object metadata.
func trimMeta(m metav1.Object) {
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); len(a) > 0 {
		var kept map[string]string
		for k, v := range a {
			if keptAnnotations[k] {
				if kept == nil {
					kept = map[string]string{}
				}
				kept[k] = v
			}
		}
		m.SetAnnotations(kept)
	}
}

// trimPodSpec redacts environment variable values.
func trimPodSpec(spec *corev1.PodSpec) {
	for i := range spec.InitContainers {
		redactEnv(spec.InitContainers[i].Env)
	}
	for i := range spec.Containers {
		redactEnv(spec.Containers[i].Env)
	}
	for i := range spec.EphemeralContainers {
		redactEnv(spec.EphemeralContainers[i].Env)
	}
}

func redactEnv(env []corev1.EnvVar) {
	for i := range env {
		if env[i].Value != "" {
			env[i].Value = Redacted
		}
	}
}

// trimNode drops the image list, the largest part of a Node's status, which
// no check reads.
func trimNode(n *corev1.Node) {
	n.Status.Images = nil
}

// trimPod keeps of a pod only what checks read, or may plausibly read to
// explain a finding, and shares repeated strings through in. A pod is by far
// the most numerous object, so every byte kept per pod is 100 MB at 100k
// pods. Kept:
//
//   - metadata: name, namespace, uid, labels, the annotations trimMeta
//     keeps, owner references, creation and deletion timestamps;
//   - spec: nodeName, hostNetwork, serviceAccountName, priorityClassName,
//     priority; for every container (init, regular, ephemeral) its name,
//     image, imagePullPolicy, mounts of hostPath volumes and environment
//     variable names (values redacted, as everywhere); hostPath volumes;
//   - status: phase, reason, message, the Ready condition and every
//     condition that is not True (type, status, reason,
//     lastTransitionTime), hostIP, podIP, startTime, qosClass,
//     nominatedNodeName, and for every container status its name, image,
//     imageID, ready, started, restartCount, state and last state.
//
// Dropped: where environment values come from, resources, probes, ports,
// commands, security contexts, affinity, tolerations, other
// volumes and the long condition messages.
func trimPod(p *corev1.Pod, in *interner) {
	m := &p.ObjectMeta
	kept := corev1.Pod{TypeMeta: p.TypeMeta}
	kept.ObjectMeta = metav1.ObjectMeta{
		Name: m.Name, Namespace: in.str(m.Namespace), UID: m.UID,
		Labels: in.labelSet(m.Labels), Annotations: m.Annotations,
		CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp,
	}
	if len(m.OwnerReferences) > 0 {
		kept.OwnerReferences = make([]metav1.OwnerReference, len(m.OwnerReferences))
		for i, o := range m.OwnerReferences {
			o.APIVersion, o.Kind, o.Name = in.str(o.APIVersion), in.str(o.Kind), in.str(o.Name)
			kept.OwnerReferences[i] = o
		}
	}

	s := &p.Spec
	kept.Spec = corev1.PodSpec{
		NodeName: in.str(s.NodeName), HostNetwork: s.HostNetwork,
		ServiceAccountName: in.str(s.ServiceAccountName), PriorityClassName: in.str(s.PriorityClassName),
		Priority: s.Priority,
	}
	hostPaths := map[string]bool{}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = true
		}
	}
	kept.Spec.InitContainers = trimContainers(s.InitContainers, hostPaths, in)
	kept.Spec.Containers = trimContainers(s.Containers, hostPaths, in)
	for _, e := range s.EphemeralContainers {
		kept.Spec.EphemeralContainers = append(kept.Spec.EphemeralContainers, corev1.EphemeralContainer{
			EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: e.Name, Image: in.str(e.Image),
				ImagePullPolicy: corev1.PullPolicy(in.str(string(e.ImagePullPolicy)))}})
	}
	for _, v := range s.Volumes {
		if v.HostPath != nil {
			kept.Spec.Volumes = append(kept.Spec.Volumes, corev1.Volume{Name: in.str(v.Name),
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: in.str(v.HostPath.Path), Type: v.HostPath.Type}}})
		}
	}

	st := &p.Status
	kept.Status = corev1.PodStatus{
		Phase: corev1.PodPhase(in.str(string(st.Phase))), Reason: in.str(st.Reason), Message: st.Message,
		HostIP: in.str(st.HostIP), PodIP: st.PodIP, StartTime: st.StartTime,
		QOSClass: corev1.PodQOSClass(in.str(string(st.QOSClass))), NominatedNodeName: in.str(st.NominatedNodeName),
		InitContainerStatuses:      trimContainerStatuses(st.InitContainerStatuses, in),
		ContainerStatuses:          trimContainerStatuses(st.ContainerStatuses, in),
		EphemeralContainerStatuses: trimContainerStatuses(st.EphemeralContainerStatuses, in),
	}
	for _, c := range st.Conditions {
		// Ready, and whatever is not true: a healthy pod's five true
		// conditions would cost 600 bytes and say nothing Ready does not.
		if c.Type != corev1.PodReady && c.Status == corev1.ConditionTrue {
			continue
		}
		kept.Status.Conditions = append(kept.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodConditionType(in.str(string(c.Type))), Status: corev1.ConditionStatus(in.str(string(c.Status))),
			Reason: in.str(c.Reason), LastTransitionTime: c.LastTransitionTime,
		})
	}
	*p = kept
}

// trimContainers keeps the name, image, pull policy, environment variable
// names and the mounts of the volumes in mounts (all mounts when mounts is
// nil).
func trimContainers(cs []corev1.Container, mounts map[string]bool, in *interner) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: in.str(c.Name), Image: in.str(c.Image),
			ImagePullPolicy: corev1.PullPolicy(in.str(string(c.ImagePullPolicy)))}
		for _, m := range c.VolumeMounts {
			if mounts == nil || mounts[m.Name] {
				out[i].VolumeMounts = append(out[i].VolumeMounts, corev1.VolumeMount{Name: in.str(m.Name),
					MountPath: in.str(m.MountPath), SubPath: in.str(m.SubPath), ReadOnly: m.ReadOnly})
			}
		}
		if len(c.Env) > 0 {
			env := make([]corev1.EnvVar, len(c.Env))
			for j, e := range c.Env {
				env[j].Name = in.str(e.Name)
				if e.Value != "" {
					env[j].Value = Redacted
				}
			}
			out[i].Env = env
		}
	}
	return out
}

func trimContainerStatuses(cs []corev1.ContainerStatus, in *interner) []corev1.ContainerStatus {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: in.str(c.Name), Image: in.str(c.Image), ImageID: in.str(c.ImageID),
			Ready: c.Ready, Started: c.Started, RestartCount: c.RestartCount,
			State: trimState(c.State, in), LastTerminationState: trimState(c.LastTerminationState, in)}
	}
	return out
}

func trimState(s corev1.ContainerState, in *interner) corev1.ContainerState {
	if s.Waiting != nil {
		s.Waiting = &corev1.ContainerStateWaiting{Reason: in.str(s.Waiting.Reason), Message: s.Waiting.Message}
	}
	if s.Terminated != nil {
		t := *s.Terminated
		t.Reason, t.ContainerID = in.str(t.Reason), ""
		s.Terminated = &t
	}
	return s
}

// trimReplicaSet keeps of a ReplicaSet's pod template only the labels and
// the containers' names, images and pull policies. The template repeats
// its Deployment's, which keeps it whole; checks read a ReplicaSet for its
// owner, replicas and status. Large clusters hold one per Deployment
// revision kept (ten by default), so this is the second largest saving
// after pods.
func trimReplicaSet(rs *appsv1.ReplicaSet, in *interner) {
	t := &rs.Spec.Template
	t.ObjectMeta = metav1.ObjectMeta{Labels: in.labelSet(t.Labels)}
	t.Spec = corev1.PodSpec{
		InitContainers: trimContainers(t.Spec.InitContainers, map[string]bool{}, in),
		Containers:     trimContainers(t.Spec.Containers, map[string]bool{}, in),
	}
	rs.Namespace = in.str(rs.Namespace)
}
