package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestPreflightDrainEvidenceItems: budgets that forbid every eviction by
// their spec quote that spec field (and their pods' nodes and the nodes'
// pools), not a status the fixture does not
// have (the evidence said "status.disruptionsAllowed=0,
// status.expectedPods=0" of budgets without status); the node that drains
// at once quotes its pool and kubelet and its DaemonSet pod (the control
// plane node, with no pod, drains at once too); one bare pod
// "holds up" one node. Every item resolves against the fixture.
func TestPreflightDrainEvidenceItems(t *testing.T) {
	const file = "drain-budgets.yaml"
	fs, _ := runWith(t, upgradePreflightCheck(), at(checktest.Complete(checktest.Load(t, file)), "v1.33.4"), target("1.34"))
	want := map[string][]string{
		"PodDisruptionBudget shop/web allows no eviction": {"PodDisruptionBudget/shop/web: spec.maxUnavailable=0",
			"Pod/shop/web-6d5f8-abcde: spec.nodeName=apps-1", "Node/apps-1: metadata.labels[cloud.google.com/gke-nodepool]=apps"},
		"PodDisruptionBudget shop/db allows no eviction": {"PodDisruptionBudget/shop/db: spec.minAvailable=100%",
			"Pod/shop/db-0: spec.nodeName=apps-1", "Node/apps-1: metadata.labels[cloud.google.com/gke-nodepool]=apps"},
		"2 nodes run only DaemonSet and mirror pods": {
			"Node/apps-2: metadata.labels[cloud.google.com/gke-nodepool]=apps, status.nodeInfo.kubeletVersion=v1.33.2",
			"Node/cp-1: status.nodeInfo.kubeletVersion=v1.33.4",
			"Pod/monitoring/node-exporter-x2: spec.nodeName=apps-2, metadata.ownerReferences[0].kind=DaemonSet",
		},
		"1 pod without a controller holds up the drain of 1 node": {"Pod/shop/debug: spec.nodeName=apps-1"},
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		for part, lines := range want {
			if !strings.Contains(f.Title, part) {
				continue
			}
			delete(want, part)
			if !slices.Equal(got, lines) {
				t.Errorf("%q: items\n  %q\nwant\n  %q", f.Title, got, lines)
			}
			if strings.Contains(f.Title, "without a controller") && !strings.Contains(f.Message, "1 pod without a controller runs on 1 node") {
				t.Errorf("message %q", f.Message)
			}
		}
	}
	for part := range want {
		t.Errorf("no finding %q in %v", part, drainTitles(fs))
	}
	checktest.EvidenceTrue(t, fs, file)
}

func drainTitles(fs []finding.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Title)
	}
	return out
}
