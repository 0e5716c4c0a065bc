package availability

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
)

// zeroPoolsPerNode is zeroPools as it was before the pools were
// deduplicated: every node matched against every group. Its choice
// between two groups whose names both contain a pool followed map order,
// so it serves as the oracle only where no pool is ambiguous.
func zeroPoolsPerNode(nodes []corev1.Node, sizes map[string]groupSize) (map[string]string, []string) {
	out := map[string]string{}
	matched := map[string]bool{}
	for i := range nodes {
		pool := check.NodePool(&nodes[i])
		_, value, _ := strings.Cut(pool, "=")
		if value == "" {
			continue
		}
		for g, sz := range sizes {
			if sz.min == 0 && strings.Contains(g, value) {
				out[pool] = g
				matched[g] = true
			}
		}
	}
	var unmatched []string
	for g, sz := range sizes {
		if sz.min == 0 && sz.target > 0 && !matched[g] {
			unmatched = append(unmatched, g)
		}
	}
	sort.Strings(unmatched)
	return out, unmatched
}

func poolNode(name, pool string) corev1.Node {
	return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"cloud.google.com/gke-nodepool": pool}}}
}

// The pools matched once each give the per-node matching's answer: on
// the check's fixtures and on 2,000 nodes in 40 pools against 60 groups
// (min 0 and not, with and without nodes, some matching no pool).
func TestZeroPoolsOncePerPoolAsPerNode(t *testing.T) {
	for _, file := range []string{"pool-scales-to-zero/gap.yaml", "pool-scales-to-zero/ok.yaml"} {
		s := checktest.Load(t, file)
		var status string
		for i := range s.ConfigMaps {
			if cm := &s.ConfigMaps[i]; cm.Namespace == caStatusNS && cm.Name == caStatusName {
				status = cm.Data["status"]
			}
		}
		sizes := groupSizes(status)
		if len(sizes) == 0 {
			t.Fatalf("%s: no node groups in the status", file)
		}
		gotPools, gotUnmatched := zeroPools(s.Nodes, sizes)
		wantPools, wantUnmatched := zeroPoolsPerNode(s.Nodes, sizes)
		if !maps.Equal(gotPools, wantPools) || !slices.Equal(gotUnmatched, wantUnmatched) {
			t.Errorf("%s: %v %v, per node %v %v", file, gotPools, gotUnmatched, wantPools, wantUnmatched)
		}
	}
	var nodes []corev1.Node
	for i := range 2000 {
		nodes = append(nodes, poolNode(fmt.Sprintf("n%d", i), fmt.Sprintf("pool%02d", i%40)))
	}
	sizes := map[string]groupSize{}
	for g := range 60 {
		// Groups gke-c-poolNN-grp for NN < 50: pools 40..49 have no nodes.
		sizes[fmt.Sprintf("gke-c-pool%02d-grp", g%50)+strings.Repeat("x", g/50)] = groupSize{min: g % 3, target: g % 2}
	}
	gotPools, gotUnmatched := zeroPools(nodes, sizes)
	wantPools, wantUnmatched := zeroPoolsPerNode(nodes, sizes)
	if !maps.Equal(gotPools, wantPools) || !slices.Equal(gotUnmatched, wantUnmatched) {
		t.Errorf("generated: %v %v, per node %v %v", gotPools, gotUnmatched, wantPools, wantUnmatched)
	}
	if len(gotPools) == 0 || len(gotUnmatched) == 0 {
		t.Errorf("the generated case exercises nothing: pools %v, unmatched %v", gotPools, gotUnmatched)
	}
}

// A pool two min-0 groups' names contain maps to the first in name order,
// every run (the per-node matching picked either, by map order).
func TestZeroPoolsAmbiguousPoolIsStable(t *testing.T) {
	nodes := []corev1.Node{poolNode("a", "web"), poolNode("b", "web")}
	sizes := map[string]groupSize{"eks-webhooks": {0, 1}, "eks-web-1": {0, 1}, "eks-web-2": {0, 1}}
	for range 20 {
		pools, unmatched := zeroPools(nodes, sizes)
		if pools["cloud.google.com/gke-nodepool=web"] != "eks-web-1" || len(unmatched) != 0 {
			t.Fatalf("pools %v, unmatched %v", pools, unmatched)
		}
	}
}
