package storage

// The node-local-capacity rule of pv-zone-schedulability: CSIStorageCapacity
// objects scoped to one node while cluster-autoscaler runs.

import (
	"fmt"
	"sort"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func nodeLocalCapacityFindings(ctx *check.Context, s *snapshot.Snapshot) []finding.Finding {
	// The cluster-autoscaler's container image, quoted.
	var autoscaler *finding.EvidenceItem
	for i := range s.Deployments {
		d := &s.Deployments[i]
		for j := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[j] // by index: not a copy of every container
			if check.ImageName(c.Image) == "cluster-autoscaler" {
				it := finding.Quote(check.Ref("apps/v1", "Deployment", d),
					finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image))
				autoscaler = &it
			}
		}
	}
	byDriver := map[string][]*storagev1.CSIStorageCapacity{}
	for i := range s.CSIStorageCapacities {
		c := &s.CSIStorageCapacities[i]
		if c.NodeTopology != nil && c.NodeTopology.MatchLabels["kubernetes.io/hostname"] != "" {
			byDriver[c.StorageClassName] = append(byDriver[c.StorageClassName], c)
		}
	}
	if len(byDriver) == 0 {
		return nil
	}
	if autoscaler == nil {
		if !ctx.Complete(snapshot.Deployments) {
			ctx.Incomplete(ruleNodeLocal, "node-local capacity objects exist and the input does not hold every Deployment: cluster-autoscaler may run")
		}
		return nil
	}
	classes := make([]string, 0, len(byDriver))
	for c := range byDriver {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var objs []finding.ObjectRef
	var ev []string
	scoped := 0
	// Each capacity object's class and node: the node differs from object
	// to object, so each is its own item.
	var items []finding.EvidenceItem
	for _, cls := range classes {
		caps := byDriver[cls]
		scoped += len(caps)
		for _, c := range caps {
			ref := check.Ref("storage.k8s.io/v1", "CSIStorageCapacity", c)
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, ref)
			}
			if len(items) < check.MaxEvidence {
				items = append(items, finding.Quote(ref, finding.Value("storageClassName", c.StorageClassName),
					finding.Value("nodeTopology.matchLabels[kubernetes.io/hostname]", c.NodeTopology.MatchLabels["kubernetes.io/hostname"])))
			}
		}
		ev = append(ev, fmt.Sprintf("StorageClass %s: %d CSIStorageCapacity objects scoped to one node each (kubernetes.io/hostname)", cls, len(caps)))
	}
	f := finding.Finding{
		Check: "pv-zone-schedulability", Severity: finding.Medium,
		Title: "Node-local storage capacity with cluster-autoscaler: pods with such volumes may never scale up",
		Message: "Capacity published per node says nothing about a node that does not exist yet, so cluster-autoscaler's " +
			"simulation finds no storage on a new node and does not add one for pods waiting on these StorageClasses.",
		Objects:     objs,
		Remediation: "Publish capacity for node-group topologies the autoscaler can template, or keep enough existing nodes with free local capacity; check the driver's and autoscaler's guidance.",
		Cases:       []string{capacityCase},
	}
	f.AddEvidence(*autoscaler)
	f.Evidence = append(f.Evidence, ev...)
	f.AddEvidence(items...)
	if scoped > len(items) {
		f.Evidence = append(f.Evidence, "further node-scoped capacity objects are counted above, not quoted")
	}
	return []finding.Finding{f}
}
