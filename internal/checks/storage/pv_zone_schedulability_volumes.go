package storage

// The volume-without-node rule of pv-zone-schedulability: bound volumes whose
// node affinity no Ready, schedulable node satisfies, and the Karpenter
// NodePools that could create a node there.

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// volumeFindings judges bound volumes. Volumes with the same node affinity
// are judged once: at 10,000 volumes in three zones that is three passes
// over the nodes, not 10,000.
func volumeFindings(ctx *check.Context, s *snapshot.Snapshot, usable []*corev1.Node) []finding.Finding {
	type verdict struct {
		matching  int
		karpenter string
		zones     []string
	}
	pools := karpenterZones(s)
	cache := map[string]*verdict{}
	var key []byte // each volume's selectorKey, in one reused buffer
	var none, one []*corev1.PersistentVolume
	for i := range s.PersistentVolumes {
		pv := &s.PersistentVolumes[i]
		if pv.Spec.ClaimRef == nil || pv.Status.Phase == corev1.VolumeReleased || pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
			continue
		}
		key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
		v := cache[string(key)] // looked up without a string per volume
		if v == nil {
			v = &verdict{zones: affinityZones(pv.Spec.NodeAffinity.Required)}
			for _, n := range usable {
				if matchesSelector(pv.Spec.NodeAffinity.Required, n) {
					v.matching++
					if v.matching > 1 {
						break
					}
				}
			}
			v.karpenter = pools.covering(v.zones)
			cache[string(key)] = v
		}
		switch v.matching {
		case 0:
			none = append(none, pv)
		case 1:
			one = append(one, pv)
		}
	}
	if !ctx.Complete(snapshot.Nodes) {
		if len(none)+len(one) > 0 {
			ctx.Incomplete(ruleNoNode, "the input does not hold every Node: volumes without a matching node in it may have one")
		}
		return nil
	}
	var out []finding.Finding
	for _, group := range []struct {
		pvs []*corev1.PersistentVolume
		sev finding.Severity
		how string
	}{{none, finding.High, "no Ready, schedulable node"}, {one, finding.Medium, "only one Ready, schedulable node"}} {
		if len(group.pvs) == 0 {
			continue
		}
		sev := group.sev
		var objs []finding.ObjectRef
		var ev []string
		var items []finding.EvidenceItem
		for _, pv := range group.pvs {
			key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
			v := cache[string(key)]
			if v.karpenter != "" && group.sev == finding.High {
				sev = finding.Medium
			}
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, check.Ref("v1", "PersistentVolume", pv))
			}
			if len(ev) < check.MaxEvidence {
				line := fmt.Sprintf("PersistentVolume %s, bound to %s/%s, needs a node with %s",
					pv.Name, pv.Spec.ClaimRef.Namespace, pv.Spec.ClaimRef.Name, describeSelector(pv.Spec.NodeAffinity.Required))
				if v.karpenter != "" {
					line += "; Karpenter NodePool " + v.karpenter + " could create one there"
				}
				ev = append(ev, line)
				items = append(items, finding.Quote(check.Ref("v1", "PersistentVolume", pv),
					finding.Value("spec.claimRef.namespace", pv.Spec.ClaimRef.Namespace),
					finding.Value("spec.claimRef.name", pv.Spec.ClaimRef.Name),
					finding.Value("spec.nodeAffinity.required", finding.JSONText(pv.Spec.NodeAffinity.Required))))
			}
		}
		if sev != group.sev {
			// Mixed: keep high when any volume has no NodePool either.
			for _, pv := range group.pvs {
				key = selectorKey(key[:0], pv.Spec.NodeAffinity.Required)
				if cache[string(key)].karpenter == "" {
					sev = group.sev
				}
			}
		}
		ev = append(ev, fmt.Sprintf("%d of %d Nodes are Ready and schedulable", len(usable), len(s.Nodes)))
		f := finding.Finding{
			Check: "pv-zone-schedulability", Severity: sev,
			Title: fmt.Sprintf("%s can be attached on %s", check.Plural(len(group.pvs), "bound volume", "bound volumes"), group.how),
			Message: "A volume can only be used from nodes its node affinity allows (for a zonal disk, its zone). When " +
				"none of those nodes is Ready and schedulable, pods using it stay Pending with a volume node affinity " +
				"conflict; with one left, the next drain or failure there does it. Cluster-autoscaler node groups that " +
				"scale from zero in that zone are not visible to this check.",
			Objects:     objs,
			Evidence:    ev,
			Remediation: "Keep schedulable capacity in every zone that holds volumes (a node group per zone, or a NodePool allowing the zone), or move the data to a volume in a zone with nodes.",
			Cases:       []string{zoneCase},
		}
		// The volumes, then every node's Ready status and cordon, grouped:
		// what the count of Ready, schedulable nodes is made of.
		f.AddEvidence(items...)
		f.AddEvidence(check.NodeValues(nodePtrs(s.Nodes), readyAndCordon)...)
		out = append(out, f)
	}
	return out
}

func nodePtrs(nodes []corev1.Node) []*corev1.Node {
	out := make([]*corev1.Node, len(nodes))
	for i := range nodes {
		out[i] = &nodes[i]
	}
	return out
}

// readyAndCordon quotes a node's Ready condition (absent when it has none)
// and spec.unschedulable when it is set.
func readyAndCordon(n *corev1.Node) []finding.Field {
	const ready = "status.conditions[type=Ready].status"
	fs := []finding.Field{finding.Absent(ready)}
	if st := check.NodeReady(n); st != "" {
		fs[0] = finding.Value(ready, string(st))
	}
	if n.Spec.Unschedulable {
		fs = append(fs, finding.Value("spec.unschedulable", true))
	}
	return fs
}

// nodePools are Karpenter NodePools and the zones they may create nodes in
// (nil: any zone).
type nodePools []struct {
	name  string
	zones map[string]bool
}

func karpenterZones(s *snapshot.Snapshot) nodePools {
	var out nodePools
	for _, np := range s.CustomObjects(snapshot.KarpenterNodePools) {
		reqs, _, _ := unstructuredSlice(np.Object, "spec", "template", "spec", "requirements")
		var zones map[string]bool
		for _, r := range reqs {
			m, ok := r.(map[string]any)
			if !ok || m["key"] != "topology.kubernetes.io/zone" || m["operator"] != "In" {
				continue
			}
			zones = map[string]bool{}
			vals, _ := m["values"].([]any)
			for _, v := range vals {
				if z, ok := v.(string); ok {
					zones[z] = true
				}
			}
		}
		out = append(out, struct {
			name  string
			zones map[string]bool
		}{np.GetName(), zones})
	}
	return out
}

// covering names a NodePool that may create a node in one of zones.
func (ps nodePools) covering(zones []string) string {
	if len(zones) == 0 {
		return ""
	}
	for _, p := range ps {
		if p.zones == nil {
			return p.name
		}
		for _, z := range zones {
			if p.zones[z] {
				return p.name
			}
		}
	}
	return ""
}

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	return unstructured.NestedSlice(obj, fields...)
}
