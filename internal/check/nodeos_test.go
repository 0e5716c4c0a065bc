package check

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/nodeos"
)

// TestIdentifyNodesAsPerNode holds IdentifyNodes, which looks each
// distinct osImage and kernel up once, to a lookup of every node.
func TestIdentifyNodesAsPerNode(t *testing.T) {
	images := []struct{ os, kernel string }{
		{"Ubuntu 22.04.4 LTS", "5.15.0-1064-azure"},
		{"Amazon Linux 2", "5.10.215-203.850.amzn2.x86_64"},
		{"Bottlerocket OS 1.19.2 (aws-k8s-1.29)", "6.1.82"},
		{"Container-Optimized OS from Google", "6.1.58+"},
		{"Something Unknown 1.0", "1.0"},
		{"", ""},
	}
	var nodes []corev1.Node
	for i := range 40 {
		// Runs of one image and images coming back after others.
		im := images[(i/3+i%2)%len(images)]
		nodes = append(nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n" + string(rune('a'+i%26)) + string(rune('a'+i/26))},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: im.os, KernelVersion: im.kernel}}})
	}
	got := IdentifyNodes(nodes)
	if len(got) != len(nodes) {
		t.Fatalf("%d entries for %d nodes", len(got), len(nodes))
	}
	known := 0
	for i := range nodes {
		n := &nodes[i]
		want := nodeos.Identify(n.Status.NodeInfo.OSImage, n.Status.NodeInfo.KernelVersion)
		if g := got[n.Name]; !reflect.DeepEqual(g, want) {
			t.Errorf("node %s (%q): got %+v, want %+v", n.Name, n.Status.NodeInfo.OSImage, g, want)
		}
		if want.Known {
			known++
		}
	}
	if known == 0 {
		t.Fatal("no node's image is in the table: the test compares nothing")
	}
	// One OSLookup asked node by node gives what IdentifyNodes does.
	var l OSLookup
	for i := range nodes {
		if g := l.Identify(&nodes[i]); !reflect.DeepEqual(g, got[nodes[i].Name]) {
			t.Errorf("OSLookup of node %s: got %+v, want %+v", nodes[i].Name, g, got[nodes[i].Name])
		}
	}
}
