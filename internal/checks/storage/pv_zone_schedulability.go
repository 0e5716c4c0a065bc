package storage

import (
	_ "embed"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/pv-zone-schedulability.yaml
var zonalYAML []byte

type zonalFacts struct {
	ZonalProvisioners []struct {
		Names             []string `json:"names"`
		RegionalParameter *struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"regionalParameter"`
		ZoneRedundantSkuSuffix string   `json:"zoneRedundantSkuSuffix"`
		Sources                []string `json:"sources"`
	} `json:"zonalProvisioners"`
	BindingModes []struct {
		What    string   `json:"what"`
		Sources []string `json:"sources"`
	} `json:"bindingModes"`
}

var loadZonal = check.Facts[zonalFacts]("zonal provisioner facts", zonalYAML)

// zonal reports whether a StorageClass provisions single-zone volumes.
func (f *zonalFacts) zonal(sc *storagev1.StorageClass) bool {
	for _, z := range f.ZonalProvisioners {
		found := false
		for _, n := range z.Names {
			found = found || n == sc.Provisioner
		}
		if !found {
			continue
		}
		if r := z.RegionalParameter; r != nil && sc.Parameters[r.Key] == r.Value {
			return false
		}
		if z.ZoneRedundantSkuSuffix != "" {
			for k, v := range sc.Parameters {
				if strings.EqualFold(k, "skuname") && strings.HasSuffix(strings.ToUpper(v), z.ZoneRedundantSkuSuffix) {
					return false
				}
			}
		}
		return true
	}
	return false
}

// Rules of pv-zone-schedulability.
const (
	ruleNoNode    = "volume-without-node"
	ruleImmediate = "immediate-zonal-class"
	ruleNodeLocal = "node-local-capacity"

	zoneCase     = "ebs-volume-zone-no-schedulable-node-2019-2021"
	capacityCase = "cluster-autoscaler-node-local-csistoragecapacity-blocks-scaleup-2026"
)

// zoneLabels are the node labels that name a zone.
var zoneLabels = []string{"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}

func pvZoneSchedulabilityCheck() check.Check {
	return check.Check{
		ID:       "pv-zone-schedulability",
		Title:    "Volumes no schedulable node can attach",
		Severity: finding.High,
		Description: "Bound PersistentVolumes whose required node affinity (the zone of an EBS, PD or Azure disk; the " +
			"node of a local volume) no Ready, schedulable Node satisfies: high, since the pods that use them stay " +
			"Pending with a volume node affinity conflict; medium when a Karpenter NodePool could create a node " +
			"there, or when exactly one node is left. The consuming pods' own selectors and tolerations are not " +
			"read (kubegap keeps no pod volumes), so a node counted here may still not fit them. Medium: zonal " +
			"StorageClasses (EBS, PD, Azure Disk, from a sourced table; regional and zone-redundant parameters " +
			"excepted) with volumeBindingMode Immediate and no allowedTopologies in a cluster whose nodes span " +
			"zones: the zone is chosen before the pod is placed. Medium: CSIStorageCapacity objects scoped to " +
			"one node (kubernetes.io/hostname) while cluster-autoscaler runs: the autoscaler cannot tell that a " +
			"new node would have capacity, so such pods may never trigger a scale-up. Cluster-autoscaler node " +
			"groups that scale from zero are not visible.",
		Reads: []check.Input{{Resource: snapshot.PersistentVolumes}, {Resource: snapshot.Nodes}, {Resource: snapshot.StorageClasses},
			{Resource: snapshot.CSIStorageCapacities}, {Resource: snapshot.Deployments}, check.Optional(snapshot.KarpenterNodePools)},
		Rules: []check.Rule{
			{ID: ruleNoNode, Summary: "Bound volumes whose node affinity no Ready, schedulable node satisfies",
				Needs: []snapshot.Resource{snapshot.PersistentVolumes, snapshot.Nodes}},
			{ID: ruleImmediate, Summary: "Zonal StorageClasses binding immediately in a multi-zone cluster",
				Needs: []snapshot.Resource{snapshot.StorageClasses, snapshot.Nodes}},
			{ID: ruleNodeLocal, Summary: "Node-local CSIStorageCapacity with cluster-autoscaler",
				Needs: []snapshot.Resource{snapshot.CSIStorageCapacities, snapshot.Deployments}},
		},
		Cases: check.Prevents(zoneCase, capacityCase),
		Run:   runPVZone,
	}
}

func runPVZone(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadZonal()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	if len(s.PersistentVolumes)+len(s.StorageClasses)+len(s.CSIStorageCapacities) == 0 && !ctx.Present(snapshot.PersistentVolumes) &&
		!ctx.Present(snapshot.StorageClasses) && !ctx.Present(snapshot.CSIStorageCapacities) {
		return nil, check.NotEvaluated("the input has no PersistentVolumes, StorageClasses or CSIStorageCapacities")
	}
	var usable []*corev1.Node
	zones := map[string]bool{}
	// zoneLabel is, by node position, which of zoneLabels named the
	// node's zone (-1: none); the nodes are quoted by it only when a
	// finding needs them, not a field path and a group entry per node.
	zoneLabel := make([]int8, len(s.Nodes))
	for i := range s.Nodes {
		n := &s.Nodes[i]
		zoneLabel[i] = -1
		for li, l := range zoneLabels {
			if z := n.Labels[l]; z != "" {
				zones[z] = true
				zoneLabel[i] = int8(li)
				break
			}
		}
		if check.NodeReady(n) == corev1.ConditionTrue && !n.Spec.Unschedulable {
			usable = append(usable, n)
		}
	}
	zoneItems := func() []finding.EvidenceItem {
		var zoneOf finding.Grouper // nodes by the zone label they carry
		for i := range s.Nodes {
			if li := zoneLabel[i]; li >= 0 {
				n, l := &s.Nodes[i], zoneLabels[li]
				zoneOf.Add(check.NodeRef(n.Name), finding.Value("metadata.labels["+l+"]", n.Labels[l]))
			}
		}
		return zoneOf.Items()
	}
	var out []finding.Finding
	out = append(out, volumeFindings(ctx, s, usable)...)
	out = append(out, immediateFindings(ctx, facts, s, zones, zoneItems)...)
	out = append(out, nodeLocalCapacityFindings(ctx, s)...)
	return out, nil
}
