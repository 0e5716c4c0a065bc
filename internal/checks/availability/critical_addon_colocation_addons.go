package availability

// critical-addon-colocation: which workloads are critical add-ons (CoreDNS,
// metrics-server, ingress controllers by image, backends of fail-closed
// webhooks), over the Deployments and StatefulSets replicatedWorkloads lists
// (other checks of this package use that list too).

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// ingressImages are the image names (last path element) of common ingress
// controllers; ingress-nginx's is "controller" under an ingress-nginx
// repository. A list of our choosing: controllers not on it are missed.
var ingressImages = map[string]bool{
	"nginx-ingress": true, "traefik": true, "haproxy-ingress": true, "kubernetes-ingress": true,
	"contour": true, "kong": true, "skipper": true,
}

// replicated is a Deployment or StatefulSet.
type replicated struct {
	kind     string
	meta     *metav1.ObjectMeta
	replicas int32
	selector *metav1.LabelSelector
	spec     *corev1.PodSpec
	labels   map[string]string
	// statusReady is status.readyReplicas, when the controller wrote a
	// status (see check.StatusReady).
	statusReady *int32
}

func (w replicated) String() string { return w.kind + " " + w.meta.Namespace + "/" + w.meta.Name }

// allReadySeen reports whether the controller's own count of ready pods
// (status.readyReplicas) says the input holds every ready pod: the ones
// missing from it are not ready, so they serve from no node.
func (w replicated) allReadySeen(seen int) bool {
	return w.statusReady != nil && int32(seen) >= *w.statusReady
}

// readyCountEvidence says, when the status stood in for missing pods, so.
func (w replicated) readyCountEvidence(seen int) string {
	if w.statusReady == nil || int32(seen) >= w.replicas {
		return ""
	}
	return fmt.Sprintf("status.readyReplicas %d: every ready pod of %s is in the input (the %d missing ones are not ready)",
		*w.statusReady, w, w.replicas-int32(seen))
}
func (w replicated) ref() finding.ObjectRef {
	return check.Ref("apps/v1", w.kind, w.meta)
}

func replicatedWorkloads(s *snapshot.Snapshot) []replicated {
	out := make([]replicated, 0, len(s.Deployments)+len(s.StatefulSets))
	// The status counts live in one block, not one allocation per workload.
	counts := make([]int32, 0, len(s.Deployments)+len(s.StatefulSets))
	statusReady := func(generation int64, ready int32) *int32 {
		n, ok := check.StatusReady(generation, ready)
		if !ok {
			return nil
		}
		counts = append(counts, n)
		return &counts[len(counts)-1]
	}
	one := func(p *int32) int32 {
		if p == nil {
			return 1 // the API default
		}
		return *p
	}
	for i := range s.Deployments {
		d := &s.Deployments[i]
		w := replicated{kind: "Deployment", meta: &d.ObjectMeta, replicas: one(d.Spec.Replicas), selector: d.Spec.Selector,
			spec: &d.Spec.Template.Spec, labels: d.Spec.Template.Labels,
			statusReady: statusReady(d.Status.ObservedGeneration, d.Status.ReadyReplicas)}
		out = append(out, w)
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		w := replicated{kind: "StatefulSet", meta: &d.ObjectMeta, replicas: one(d.Spec.Replicas), selector: d.Spec.Selector,
			spec: &d.Spec.Template.Spec, labels: d.Spec.Template.Labels,
			statusReady: statusReady(d.Status.ObservedGeneration, d.Status.ReadyReplicas)}
		out = append(out, w)
	}
	return out
}

// backendService is a Service with a selector that fail-closed webhooks
// call, with the webhooks' names.
type backendService struct {
	svc   *corev1.Service
	hooks []string
}

// webhookServicesByNS keeps, by namespace and in the input's order, only
// the Services with a selector that some fail-closed webhook calls: the
// only ones addonRole can match. Every workload scanned every Service of
// its namespace (and built its "namespace/name" key) before, workloads ×
// Services per namespace.
func webhookServicesByNS(s *snapshot.Snapshot, webhookBackends map[string][]string) map[string][]backendService {
	out := map[string][]backendService{}
	if len(webhookBackends) == 0 {
		return out
	}
	for i := range s.Services {
		svc := &s.Services[i]
		hooks := webhookBackends[svc.Namespace+"/"+svc.Name]
		if len(hooks) == 0 || len(svc.Spec.Selector) == 0 {
			continue
		}
		out[svc.Namespace] = append(out[svc.Namespace], backendService{svc: svc, hooks: hooks})
	}
	return out
}

// addonRole says why w is critical, or "".
func addonRole(w replicated, servicesByNS map[string][]backendService) string {
	if w.meta.Namespace == "kube-system" && w.labels["k8s-app"] == "kube-dns" {
		return "CoreDNS"
	}
	for i := range w.spec.Containers {
		image := w.spec.Containers[i].Image // by index: not a copy of every container
		name := check.ImageName(image)
		repo, _, _ := check.ImageParts(image)
		switch {
		case name == "coredns" && w.meta.Namespace == "kube-system":
			return "CoreDNS"
		case name == "metrics-server":
			return "metrics-server"
		case ingressImages[name] || strings.HasSuffix(repo, "ingress-nginx/controller"):
			return "ingress controller"
		}
	}
	for _, b := range servicesByNS[w.meta.Namespace] {
		if labels.SelectorFromSet(b.svc.Spec.Selector).Matches(labels.Set(w.labels)) {
			return fmt.Sprintf("backend of fail-closed %s (Service %s/%s)", check.ListText(b.hooks, 2), b.svc.Namespace, b.svc.Name)
		}
	}
	return ""
}
