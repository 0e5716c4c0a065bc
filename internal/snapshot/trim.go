package snapshot

import (
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
