package storage

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestPVZoneEvidenceItems: each finding on the gap fixture quotes what it
// judged, as read: the volume's claim and node affinity and every node's
// Ready status and cordon (grouped), the classes' binding mode and the
// nodes' zones (grouped), the autoscaler's image and the capacity objects'
// node scopes. The items resolve against the fixture.
func TestPVZoneEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, pvZoneSchedulabilityCheck(), checktest.Complete(checktest.Load(t, "zone-gap.yaml")))
	want := map[string][]string{
		"no Ready, schedulable node": {
			`PersistentVolume/pv-c: spec.claimRef.namespace=db, spec.claimRef.name=data-pg-2, spec.nodeAffinity.required=` +
				`{"nodeSelectorTerms":[{"matchExpressions":[{"key":"topology.ebs.csi.aws.com/zone","operator":"In","values":["eu-west-1c"]}]}]}`,
			"3 Nodes (n-a1, n-b1, n-b2): status.conditions[type=Ready].status=True",
			"Node/n-c1: status.conditions[type=Ready].status=False",
			"Node/n-c2: status.conditions[type=Ready].status=True, spec.unschedulable=true",
		},
		"zonal volumes before their pods are placed": {
			"StorageClass/gp3: provisioner=ebs.csi.aws.com, volumeBindingMode absent, allowedTopologies absent",
			"Node/n-a1: metadata.labels[topology.kubernetes.io/zone]=eu-west-1a",
			"2 Nodes (n-b1, n-b2): metadata.labels[topology.kubernetes.io/zone]=eu-west-1b",
			"2 Nodes (n-c1, n-c2): metadata.labels[topology.kubernetes.io/zone]=eu-west-1c",
		},
		"Node-local storage capacity": {
			"Deployment/kube-system/cluster-autoscaler: spec.template.spec.containers[name=cluster-autoscaler].image=registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.2",
			"CSIStorageCapacity/kube-system/csisc-n-a1: storageClassName=local-nvme, nodeTopology.matchLabels[kubernetes.io/hostname]=n-a1",
		},
	}
	for _, f := range fs {
		var lines []string
		for _, it := range f.EvidenceItems {
			lines = append(lines, it.String())
		}
		for part, w := range want {
			if !strings.Contains(f.Title, part) {
				continue
			}
			delete(want, part)
			for _, l := range w {
				if !slices.Contains(lines, l) {
					t.Errorf("%q: no item %q in\n  %q", f.Title, l, lines)
				}
			}
		}
	}
	for part := range want {
		t.Errorf("no finding %q", part)
	}
	if n := checktest.EvidenceTrue(t, fs, "zone-gap.yaml"); n != 14 {
		t.Errorf("%d items resolved, want 14", n)
	}
}
