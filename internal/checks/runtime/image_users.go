package runtime

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// imageResources are what the image checks read to learn which images
// the cluster runs or will run: pods, and the templates that make them.
var imageResources = []snapshot.Resource{snapshot.Pods, snapshot.Deployments, snapshot.StatefulSets,
	snapshot.DaemonSets, snapshot.CronJobs}

// imageUser is one thing that runs images: a workload template, or a pod
// whose owner has no template in the input (then named itself).
type imageUser struct {
	ref    finding.ObjectRef
	kind   string // the object's kind, for the field paths
	images []string
	// containers[k] names the container of images[k]; path(k) joins its
	// field path only for the images evidence quotes, not for every
	// container of every pod.
	containers []imageContainer
}

// imageContainer is a container by list (check.Containers, ...) and name.
type imageContainer struct{ list, name string }

// path is the field path of images[k], for evidence items.
func (u *imageUser) path(k int) string {
	return check.ContainerField(u.kind, u.containers[k].list, u.containers[k].name, "image")
}

// hasImageUsers reports whether imageUsers(s) lists anything: every
// workload template is a user, and every pod is one or is covered by a
// template. It reads no object.
func hasImageUsers(s *snapshot.Snapshot) bool {
	return len(s.DaemonSets)+len(s.Deployments)+len(s.StatefulSets)+len(s.CronJobs)+len(s.Pods) > 0
}

// imageUsers lists the workload templates and the pods not made by one of
// them, each once, in O(objects). A ReplicaSet's pods are reached through
// its Deployment.
func imageUsers(s *snapshot.Snapshot) []imageUser {
	var users []imageUser
	covered := map[[3]string]bool{} // kind, namespace, name
	add := func(apiVersion, kind string, m *metav1.ObjectMeta, spec *corev1.PodSpec) {
		covered[[3]string{kind, m.Namespace, m.Name}] = true
		u := imageUser{ref: check.Ref(apiVersion, kind, m), kind: kind}
		for k, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
			for j := range cs {
				u.images = append(u.images, cs[j].Image)
				u.containers = append(u.containers, imageContainer{[]string{check.InitContainers, check.Containers}[k], cs[j].Name})
			}
		}
		users = append(users, u)
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		add("apps/v1", "DaemonSet", &d.ObjectMeta, &d.Spec.Template.Spec)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		add("apps/v1", "Deployment", &d.ObjectMeta, &d.Spec.Template.Spec)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		add("apps/v1", "StatefulSet", &d.ObjectMeta, &d.Spec.Template.Spec)
	}
	for i := range s.CronJobs {
		c := &s.CronJobs[i]
		add("batch/v1", "CronJob", &c.ObjectMeta, &c.Spec.JobTemplate.Spec.Template.Spec)
	}
	ix := s.Index()
	for i := range s.Pods {
		p := &s.Pods[i]
		if k, ok := podOwnerKey(ix, p); ok && covered[k] {
			continue
		}
		u := imageUser{ref: podRef(p), kind: "Pod"}
		for k, cs := range [][]snapshot.Container{p.Spec.InitContainers, p.Spec.Containers, p.Spec.EphemeralContainers} {
			for j := range cs {
				u.images = append(u.images, cs[j].Image)
				u.containers = append(u.containers, imageContainer{[]string{check.InitContainers, check.Containers, check.EphemeralContainers}[k], cs[j].Name})
			}
		}
		users = append(users, u)
	}
	return users
}

// podOwnerKey is the kind, namespace and name of the workload that made
// the pod (snapshot.Index.WorkloadOf): a CronJob's pods reach it through
// their Job, so they count under the CronJob's template.
func podOwnerKey(ix *snapshot.Index, p *snapshot.Pod) ([3]string, bool) {
	o, ok := ix.WorkloadOf(p)
	return [3]string{o.Kind, p.Namespace, o.Name}, ok
}

func podRef(p *snapshot.Pod) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
}
