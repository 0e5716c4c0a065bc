package availability

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// What the availability checks share: pod readiness, node zones, the
// scheduling hints of a template, and which Services fail-closed webhooks
// call.

// zoneLabels name a node's zone, the current label first.
var zoneLabels = [...]string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

func zoneOf(n *corev1.Node) string {
	for _, l := range zoneLabels {
		if z := n.Labels[l]; z != "" {
			return z
		}
	}
	return ""
}

// placement is where a workload's ready pods run: the nodes, and the
// zones of those nodes whose zone is known.
type placement struct {
	nodes, zones map[string]bool
	zoneKnown    bool // every pod's node is in the input with a zone label
}

// placementOf reads the nodes and zones of the ready pods from the
// cluster's node zones (one lookup per pod, not the node's labels twice).
// It stops at the first pod that makes both answers no: on two nodes, and
// on two zones or one unknown, neither oneNode nor oneZone can hold, and
// only they read the nodes and zones. Most workloads spread, so most
// stop after a few pods; until one of the answers holds at the end, it
// compares names with the first pod's instead of filling sets (two maps
// per workload were most of its cost), and a placement that stopped
// early carries no sets at all.
func placementOf(sh clusterShape, ready []*snapshot.Pod) placement {
	pl := placement{zoneKnown: true}
	var firstNode, firstZone string
	multiNode, multiZone := false, false
	for i, p := range ready {
		if i == 0 {
			firstNode = p.Spec.NodeName
		} else if p.Spec.NodeName != firstNode {
			multiNode = true
		}
		z, ok := sh.zoneOfPod(p)
		switch {
		case !ok || z == "":
			pl.zoneKnown = false
		case firstZone == "":
			firstZone = z
		case z != firstZone:
			multiZone = true
		}
		if multiNode && (!pl.zoneKnown || multiZone) {
			return pl // neither answer holds: no sets
		}
	}
	pl.nodes, pl.zones = map[string]bool{}, map[string]bool{}
	if firstZone != "" {
		pl.zones[firstZone] = true // one zone, or the walk had stopped
	}
	if !multiNode {
		if len(ready) > 0 {
			pl.nodes[firstNode] = true
		}
		return pl
	}
	for _, p := range ready {
		pl.nodes[p.Spec.NodeName] = true
	}
	return pl
}

// oneNode reports whether every ready pod shares one node while the
// cluster has at least one other schedulable node.
func (pl placement) oneNode(sh clusterShape) bool {
	return len(pl.nodes) == 1 && sh.schedulable >= 2
}

// oneZone returns the zone every ready pod runs in, when the pods use
// several nodes but one zone while schedulable nodes span several.
func (pl placement) oneZone(sh clusterShape) (string, bool) {
	if len(pl.nodes) <= 1 || !pl.zoneKnown || len(pl.zones) != 1 || len(sh.zones) < 2 {
		return "", false
	}
	return slices.Sorted(maps.Keys(pl.zones))[0], true
}

// podReady reports whether a pod serves: Ready and not being deleted.
func podReady(p *snapshot.Pod) bool {
	return p.DeletionTimestamp == nil && p.Spec.NodeName != "" && check.PodReady(p)
}

// spreadHints describes what keeps a template's replicas apart, for
// evidence: required or preferred pod anti-affinity and topology spread.
func spreadHints(spec *corev1.PodSpec) (text string, hard bool) {
	var parts []string
	if a := spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		if n := len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution); n > 0 {
			parts = append(parts, fmt.Sprintf("%d required pod anti-affinity terms", n))
			hard = true
		}
		if n := len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution); n > 0 {
			parts = append(parts, fmt.Sprintf("%d preferred (soft) pod anti-affinity terms", n))
		}
	}
	for _, c := range spec.TopologySpreadConstraints {
		parts = append(parts, fmt.Sprintf("topology spread on %s (maxSkew %d, %s)", c.TopologyKey, c.MaxSkew, c.WhenUnsatisfiable))
		hard = hard || c.WhenUnsatisfiable == corev1.DoNotSchedule
	}
	if len(parts) == 0 {
		return "no pod anti-affinity and no topology spread constraints", false
	}
	if !hard {
		parts = append(parts, "all soft: the scheduler may still put every replica together and never moves them apart")
	}
	return strings.Join(parts, "; "), hard
}

// annotationOriginalAPIVersion records the API version an object was
// written in when the loader converted it from a removed version.
const annotationOriginalAPIVersion = "kubegap.dev/original-api-version"

// failClosed applies the failurePolicy default of the version the webhook
// was written in: Fail in admissionregistration.k8s.io/v1, Ignore in
// v1beta1.
func failClosed(m *metav1.ObjectMeta, fp *admissionv1.FailurePolicyType) bool {
	if fp != nil {
		return *fp == admissionv1.Fail
	}
	return m.Annotations[annotationOriginalAPIVersion] != "admissionregistration.k8s.io/v1beta1"
}

// failClosedBackends maps "namespace/name" of each Service a fail-closed
// webhook calls to the webhook configurations calling it.
func failClosedBackends(s *snapshot.Snapshot) map[string][]string {
	out := map[string][]string{}
	add := func(kind, cfg string, meta *metav1.ObjectMeta, fp *admissionv1.FailurePolicyType, svc *admissionv1.ServiceReference) {
		if svc == nil || !failClosed(meta, fp) {
			return
		}
		key := svc.Namespace + "/" + svc.Name
		name := kind + " " + cfg
		for _, have := range out[key] {
			if have == name {
				return
			}
		}
		out[key] = append(out[key], name)
	}
	for i := range s.ValidatingWebhookConfigurations {
		c := &s.ValidatingWebhookConfigurations[i]
		for _, w := range c.Webhooks {
			add("ValidatingWebhookConfiguration", c.Name, &c.ObjectMeta, w.FailurePolicy, w.ClientConfig.Service)
		}
	}
	for i := range s.MutatingWebhookConfigurations {
		c := &s.MutatingWebhookConfigurations[i]
		for _, w := range c.Webhooks {
			add("MutatingWebhookConfiguration", c.Name, &c.ObjectMeta, w.FailurePolicy, w.ClientConfig.Service)
		}
	}
	return out
}
