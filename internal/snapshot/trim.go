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
	IgnoreAnnotation:                                 true, // suppressions (internal/suppress)
	IgnoreReasonAnnotation:                           true,
}

func schemaGVK(r Resource) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// trimMeta drops what no check reads from object metadata.
func trimMeta(m metav1.Object) {
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(keptAnnotationsOf(a))
	}
}

// keptAnnotationsOf returns the annotations of a that some check reads, or
// nil.
func keptAnnotationsOf(a map[string]string) map[string]string {
	var kept map[string]string
	for k, v := range a {
		if keptAnnotations[k] {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[k] = v
		}
	}
	return kept
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
func trimNode(n *corev1.Node, _ *interner) {
	n.Status.Images = nil
}

// trimContainers keeps of a template's containers the name, image, pull
// policy, environment variable names and the mounts of the hostPath
// volumes named in hostPaths.
func trimContainers(cs []corev1.Container, hostPaths map[string]bool, in *interner) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: in.str(c.Name), Image: in.str(c.Image),
			ImagePullPolicy: corev1.PullPolicy(in.str(string(c.ImagePullPolicy))),
			VolumeMounts:    hostPathMounts(c.VolumeMounts, hostPaths, in)}
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

// hostPathMounts keeps the mounts of the volumes named in hostPaths.
func hostPathMounts(ms []corev1.VolumeMount, hostPaths map[string]bool, in *interner) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, m := range ms {
		if hostPaths[m.Name] {
			out = append(out, corev1.VolumeMount{Name: in.str(m.Name),
				MountPath: in.str(m.MountPath), SubPath: in.str(m.SubPath), ReadOnly: m.ReadOnly})
		}
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
		InitContainers: trimContainers(t.Spec.InitContainers, nil, in),
		Containers:     trimContainers(t.Spec.Containers, nil, in),
	}
	rs.Namespace = in.str(rs.Namespace)
}

// trimWorkloadTemplate keeps of a Deployment's or StatefulSet's pod
// template what checks read or plausibly will: labels; scheduling (node
// name and selector, affinity, tolerations, priority class, runtime class,
// service account, host network); hostPath volumes; and per container its name, image, pull
// policy, resources, hostPath mounts and environment variable names
// (values redacted). Probes, ports, commands, security contexts, lifecycle
// hooks, other volumes and where environment values come from are dropped:
// at 7,000 Deployments the whole templates held 60 MB. DaemonSets keep
// their whole templates: checks read far more of them, and there are few.
func trimWorkloadTemplate(t *corev1.PodTemplateSpec, in *interner) {
	spec := &t.Spec
	hostPaths := map[string]bool{}
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = true
			volumes = append(volumes, corev1.Volume{Name: in.str(v.Name),
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: in.str(v.HostPath.Path), Type: v.HostPath.Type}}})
		}
	}
	kept := corev1.PodSpec{
		NodeName: in.str(spec.NodeName), NodeSelector: spec.NodeSelector, Affinity: spec.Affinity,
		Tolerations: spec.Tolerations, RuntimeClassName: spec.RuntimeClassName,
		PriorityClassName: in.str(spec.PriorityClassName), Priority: spec.Priority,
		ServiceAccountName: in.str(spec.ServiceAccountName), HostNetwork: spec.HostNetwork,
		Volumes:        volumes,
		InitContainers: trimContainers(spec.InitContainers, hostPaths, in),
		Containers:     trimContainers(spec.Containers, hostPaths, in),
	}
	for i, c := range spec.InitContainers {
		kept.InitContainers[i].Resources = c.Resources
	}
	for i, c := range spec.Containers {
		kept.Containers[i].Resources = c.Resources
	}
	*spec = kept
	t.ObjectMeta = metav1.ObjectMeta{Labels: in.labelSet(t.Labels), Annotations: keptAnnotationsOf(t.Annotations)}
}
