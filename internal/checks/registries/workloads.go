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
	ref finding.ObjectRef
	// source is the object whose spec holds images: ref for a template,
	// the first pod for pods grouped under an owner not in the input.
	source     finding.ObjectRef
	images     []containerImage
	pods       int  // pods it runs in the input (templates: pods owned)
	daemonSet  bool // runs on every matching node
	autoscaled bool // an HPA scales it
}

// containerImage is one container's image and the pull policy it gets.
type containerImage struct {
	container, image string
	policy           corev1.PullPolicy // as stored, or the API default for templates
	// kind and list say where the image is in the source object (its
	// field path, check.ContainerField), built only for a quote.
	kind, list string
}

// imageQuote quotes the container's image as its source object has it.
func (u *imageUser) imageQuote(ci containerImage) finding.EvidenceItem {
	return finding.Quote(u.source, finding.Value(check.ContainerField(ci.kind, ci.list, ci.container, "image"), ci.image))
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

func templateImages(kind string, spec *corev1.PodSpec) []containerImage {
	out := make([]containerImage, 0, len(spec.InitContainers)+len(spec.Containers))
	for _, cs := range []struct {
		kind string
		list []corev1.Container
	}{{check.InitContainers, spec.InitContainers}, {check.Containers, spec.Containers}} {
		for j := range cs.list {
			c := &cs.list[j] // by index: not a copy of every container
			out = append(out, containerImage{c.Name, c.Image, effectivePolicy(c.Image, c.ImagePullPolicy), kind, cs.kind})
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
	// Every pod's workload, from the shared table: templates mark their
	// group covered, so that a pod is tested by its position, not by a map
	// lookup of its owner.
	pw := check.PodWorkloadsOf(s)
	var users []imageUser
	covered := make([]bool, pw.Groups)
	add := func(apiVersion, kind string, m *metav1.ObjectMeta, spec *corev1.PodSpec, ds bool) {
		id := snapshot.IDOf(kind, m)
		if g := pw.Group(id); g >= 0 {
			covered[g] = true
		}
		ref := check.Ref(apiVersion, kind, m)
		users = append(users, imageUser{ref: ref, source: ref, images: templateImages(kind, spec),
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
	for i, e := range pw.Of {
		if e >= 0 && covered[pw.Workloads[e].Group] {
			continue
		}
		p := &s.Pods[i]
		ref, owned := podOwner(pw, e)
		if !owned {
			ref = finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		}
		if j, seen := byOwner[ref]; seen {
			users[j].pods++
			continue
		}
		u := imageUser{ref: ref, pods: 1, daemonSet: ref.Kind == "DaemonSet",
			source:     finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name},
			autoscaled: autoscaled[[3]string{ref.Kind, ref.Namespace, ref.Name}]}
		for _, cs := range []struct {
			kind string
			list []snapshot.Container
		}{{check.InitContainers, p.Spec.InitContainers}, {check.Containers, p.Spec.Containers}} {
			for j := range cs.list {
				c := &cs.list[j]
				u.images = append(u.images, containerImage{c.Name, c.Image, effectivePolicy(c.Image, c.ImagePullPolicy), "Pod", cs.kind})
			}
		}
		byOwner[ref] = len(users)
		users = append(users, u)
	}
	return users
}

// podOwner is the workload of the pod whose entry in pw is e
// (snapshot.Index.WorkloadOf), as a reference.
func podOwner(pw *check.PodWorkloads, e int32) (finding.ObjectRef, bool) {
	if e < 0 {
		return finding.ObjectRef{}, false
	}
	w := &pw.Workloads[e]
	return finding.ObjectRef{APIVersion: w.Ref.APIVersion, Kind: w.Ref.Kind, Namespace: w.Namespace, Name: w.Ref.Name}, true
}
