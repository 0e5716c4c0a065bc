package registries

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// imageUser is one thing that pulls images: a workload's template, or the
// pods of an owner the input has no template of (grouped by that owner).
type imageUser struct {
	ref        finding.ObjectRef
	images     []containerImage
	pods       int  // pods it runs in the input (templates: pods owned)
	daemonSet  bool // runs on every matching node
	autoscaled bool // an HPA scales it
}

// containerImage is one container's image and the pull policy it gets.
type containerImage struct {
	container, image string
	policy           corev1.PullPolicy // as stored, or the API default for templates
}

// effectivePolicy is the policy the API server stores for a container:
// an unset policy becomes Always for :latest and for an image with neither
// tag nor digest, IfNotPresent otherwise.
func effectivePolicy(image string, p corev1.PullPolicy) corev1.PullPolicy {
	if p != "" {
		return p
	}
	_, tag, digest := check.ImageParts(image)
	if tag == "latest" || (tag == "" && digest == "") {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

func templateImages(spec *corev1.PodSpec) []containerImage {
	var out []containerImage
	for _, cs := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range cs {
			out = append(out, containerImage{c.Name, c.Image, effectivePolicy(c.Image, c.ImagePullPolicy)})
		}
	}
	return out
}

// imageUsers collects every workload template and, for pods whose owner
// has no template in the input, the pods grouped by owner: each pulling
// thing once, in O(objects).
func imageUsers(s *snapshot.Snapshot) []imageUser {
	ix := s.Index()
	autoscaled := map[[3]string]bool{} // kind, namespace, name
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		autoscaled[[3]string{h.Spec.ScaleTargetRef.Kind, h.Namespace, h.Spec.ScaleTargetRef.Name}] = true
	}
	var users []imageUser
	covered := map[snapshot.OwnerID]bool{}
	add := func(apiVersion, kind string, m *metav1.ObjectMeta, spec *corev1.PodSpec, ds bool) {
		id := snapshot.IDOf(kind, m)
		covered[id] = true
		users = append(users, imageUser{ref: check.Ref(apiVersion, kind, m), images: templateImages(spec),
			pods: len(ix.PodsControlledBy(id)), daemonSet: ds, autoscaled: autoscaled[[3]string{kind, m.Namespace, m.Name}]})
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		add("apps/v1", "DaemonSet", &d.ObjectMeta, &d.Spec.Template.Spec, true)
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		add("apps/v1", "Deployment", &d.ObjectMeta, &d.Spec.Template.Spec, false)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		add("apps/v1", "StatefulSet", &d.ObjectMeta, &d.Spec.Template.Spec, false)
	}
	for i := range s.CronJobs {
		c := &s.CronJobs[i]
		add("batch/v1", "CronJob", &c.ObjectMeta, &c.Spec.JobTemplate.Spec.Template.Spec, false)
	}
	// Pods: counted toward the template that made them, or grouped under
	// their owner (a ReplicaSet's Deployment when the ReplicaSet is known).
	byOwner := map[finding.ObjectRef]int{}
	for i := range s.Pods {
		p := &s.Pods[i]
		ref, id, owned := podOwner(ix, p)
		if owned && covered[id] {
			continue
		}
		if !owned {
			ref = finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		}
		if j, seen := byOwner[ref]; seen {
			users[j].pods++
			continue
		}
		u := imageUser{ref: ref, pods: 1, daemonSet: ref.Kind == "DaemonSet",
			autoscaled: autoscaled[[3]string{ref.Kind, ref.Namespace, ref.Name}]}
		for _, cs := range [][]snapshot.Container{p.Spec.InitContainers, p.Spec.Containers} {
			for _, c := range cs {
				u.images = append(u.images, containerImage{c.Name, c.Image, effectivePolicy(c.Image, c.ImagePullPolicy)})
			}
		}
		byOwner[ref] = len(users)
		users = append(users, u)
	}
	return users
}

// podOwner is the workload a pod belongs to (snapshot.Index.WorkloadOf),
// as a reference and an owner ID.
func podOwner(ix *snapshot.Index, p *snapshot.Pod) (finding.ObjectRef, snapshot.OwnerID, bool) {
	o, ok := ix.WorkloadOf(p)
	if !ok {
		return finding.ObjectRef{}, snapshot.OwnerID{}, false
	}
	return finding.ObjectRef{APIVersion: o.APIVersion, Kind: o.Kind, Namespace: p.Namespace, Name: o.Name},
		snapshot.RefID(p.Namespace, o), true
}
