package resources

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// nodesByPool, one walk, groups the nodes as the walk per pool it replaced
// did (every node whose pool is that pool, in the input's order): on the
// gap fixture and on 300 nodes in 7 pools, with and without pool labels.
func TestNodesByPoolAsWalkPerPool(t *testing.T) {
	gen := snapshot.New(snapshot.Source{})
	for i := range 300 {
		labels := map[string]string{}
		if i%9 != 0 {
			labels["cloud.google.com/gke-nodepool"] = fmt.Sprintf("pool-%d", i%7)
		}
		gen.Nodes = append(gen.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: labels}})
	}
	for name, s := range map[string]*snapshot.Snapshot{"gap fixture": checktest.Load(t, "unrequested-memory/gap.yaml"), "generated": gen} {
		pools := map[string]string{}
		for i := range s.Nodes {
			pools[s.Nodes[i].Name] = noPool
			if p := check.NodePool(&s.Nodes[i]); p != "" {
				pools[s.Nodes[i].Name] = p
			}
		}
		got := nodesByPool(s, pools)
		seen := map[string]bool{}
		for _, pool := range pools {
			if seen[pool] {
				continue
			}
			seen[pool] = true
			var want []*corev1.Node
			for i := range s.Nodes {
				if pools[s.Nodes[i].Name] == pool {
					want = append(want, &s.Nodes[i])
				}
			}
			if !slices.Equal(got[pool], want) {
				t.Errorf("%s: pool %s: %d nodes, the walk per pool %d", name, pool, len(got[pool]), len(want))
			}
		}
		if len(seen) < 2 {
			t.Errorf("%s: %d pools: nothing to tell apart", name, len(seen))
		}
	}
}
