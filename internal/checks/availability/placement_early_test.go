package availability

import (
	"fmt"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// placementWhole is placementOf as it was: every ready pod's node read
// through the index, no early stop.
func placementWhole(ix *snapshot.Index, ready []*snapshot.Pod) placement {
	pl := placement{nodes: map[string]bool{}, zones: map[string]bool{}, zoneKnown: true}
	for _, p := range ready {
		pl.nodes[p.Spec.NodeName] = true
		n := ix.Node(p.Spec.NodeName)
		if n == nil || zoneOf(n) == "" {
			pl.zoneKnown = false
			continue
		}
		pl.zones[zoneOf(n)] = true
	}
	return pl
}

// placementOf, stopping early, answers oneNode and oneZone as the whole
// walk does, and where either holds it has the same nodes and zones: over
// every window of pods placed on nodes in two zones, one zone, no zone
// and on nodes missing from the input.
func TestPlacementStopsEarlyWithTheSameAnswers(t *testing.T) {
	s := snapshot.New(snapshot.Source{})
	for i := range 12 {
		labels := map[string]string{}
		switch {
		case i < 5:
			labels["topology.kubernetes.io/zone"] = "z-a"
		case i < 9:
			labels["failure-domain.beta.kubernetes.io/zone"] = "z-b"
		}
		s.Nodes = append(s.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: labels}})
	}
	sh := shapeOf(s)
	ix := s.Index()
	// Pods on n0..n13: n12 and n13 are not in the input.
	var pods []*snapshot.Pod
	for i := range 14 {
		for r := range 2 {
			pods = append(pods, &snapshot.Pod{Name: fmt.Sprintf("p%d-%d", i, r), Spec: snapshot.PodSpec{NodeName: fmt.Sprintf("n%d", i)}})
		}
	}
	checked, held := 0, 0
	for from := range pods {
		for to := from + 1; to <= len(pods); to++ {
			ready := pods[from:to]
			got, want := placementOf(sh, ready), placementWhole(ix, ready)
			if got.oneNode(sh) != want.oneNode(sh) {
				t.Fatalf("pods %d..%d: oneNode %v, whole walk %v", from, to, got.oneNode(sh), want.oneNode(sh))
			}
			gz, gok := got.oneZone(sh)
			wz, wok := want.oneZone(sh)
			if gz != wz || gok != wok {
				t.Fatalf("pods %d..%d: oneZone %q %v, whole walk %q %v", from, to, gz, gok, wz, wok)
			}
			if got.oneNode(sh) || gok {
				held++
				if !maps.Equal(got.nodes, want.nodes) || !maps.Equal(got.zones, want.zones) {
					t.Fatalf("pods %d..%d: nodes %v zones %v, whole walk %v %v", from, to, got.nodes, got.zones, want.nodes, want.zones)
				}
			}
			checked++
		}
	}
	if held == 0 || held == checked {
		t.Fatalf("%d of %d windows on one node or zone: the cases do not cover both answers", held, checked)
	}
}
