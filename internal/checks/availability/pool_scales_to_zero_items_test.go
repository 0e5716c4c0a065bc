package availability

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestPoolScalesToZeroEvidenceItems: the finding quotes the pool's nodes'
// pool label and the workloads' pods (node, phase, controller), as read
// in the gap fixture.
func TestPoolScalesToZeroEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, poolScalesToZeroCheck(), checktest.Complete(checktest.Load(t, "pool-scales-to-zero/gap.yaml")))
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	var got []string
	for _, it := range fs[0].EvidenceItems {
		got = append(got, it.String())
	}
	want := []string{
		"Node/gke-datahub-core-pool-a1b2c3-x1: metadata.labels[cloud.google.com/gke-nodepool]=core-pool",
		"Pod/data8/hub-5d9f-abcde: spec.nodeName=gke-datahub-core-pool-a1b2c3-x1, status.phase=Running, " +
			"metadata.ownerReferences[controller=true].kind=ReplicaSet, metadata.ownerReferences[controller=true].name=hub-5d9f",
		"Pod/data8/proxy-5d9f-abcde: spec.nodeName=gke-datahub-core-pool-a1b2c3-x1, status.phase=Running, " +
			"metadata.ownerReferences[controller=true].kind=ReplicaSet, metadata.ownerReferences[controller=true].name=proxy-5d9f",
	}
	if !slices.Equal(got, want) {
		t.Errorf("items\n  %q\nwant\n  %q", got, want)
	}
	if n := checktest.EvidenceTrue(t, fs, "pool-scales-to-zero/gap.yaml"); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
}
