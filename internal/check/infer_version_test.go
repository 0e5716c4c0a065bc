package check

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/snapshot"
)

func nodeAt(name, kubelet string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.NodeInfo.KubeletVersion = kubelet
	return n
}

func TestInferCurrentVersion(t *testing.T) {
	t135 := &KubeVersion{Major: 1, Minor: 35}
	s := &snapshot.Snapshot{}
	s.Nodes = []corev1.Node{nodeAt("a", "v1.32.4"), nodeAt("b", "v1.34.3"), nodeAt("c", "")}
	c := InferCurrentVersion(s, t135)
	if c.Exact || c.Text() != "1.34" || !strings.Contains(c.Basis, "Node b status.nodeInfo.kubeletVersion=v1.34.3, of 2 nodes read") {
		t.Errorf("kubelets and target: %+v (%s)", c, c.Text())
	}
	// A target two minors up leaves a range.
	c = InferCurrentVersion(s, &KubeVersion{Major: 1, Minor: 36})
	if c.Text() != "1.34 to 1.35" {
		t.Errorf("range: %s", c.Text())
	}
	// kube-proxy newer than every kubelet raises the bound.
	ds := appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "kube-proxy"}}
	ds.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kube-proxy", Image: "registry.k8s.io/kube-proxy:v1.35.1"}}
	s.DaemonSets = []appsv1.DaemonSet{ds}
	c = InferCurrentVersion(s, &KubeVersion{Major: 1, Minor: 36})
	if c.Text() != "1.35" || !strings.Contains(c.Basis, "kube-proxy") {
		t.Errorf("kube-proxy bound: %+v (%s)", c, c.Text())
	}
	// Only the target: said so, and not Known.
	c = InferCurrentVersion(&snapshot.Snapshot{}, t135)
	if c.Known() || c.Text() != "at most 1.34" || !strings.Contains(c.Basis, "the only evidence") {
		t.Errorf("target only: %+v (%s)", c, c.Text())
	}
	// A stated version wins.
	s.Source.ServerVersion = "v1.33.2"
	if c = InferCurrentVersion(s, t135); !c.Exact || c.Text() != "1.33" {
		t.Errorf("stated: %+v", c)
	}
	// Nothing at all.
	if c = InferCurrentVersion(&snapshot.Snapshot{}, nil); c.Known() || c.Text() != "unknown" {
		t.Errorf("nothing: %+v (%s)", c, c.Text())
	}
}
