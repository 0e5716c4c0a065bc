package registries

import (
	"maps"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestPodsPerRegistryAsPerPod holds podsPerRegistry, which counts a run of
// pods with the same images at once, to a count pod by pod, on pods that
// share slices (in runs and apart), pods with equal containers in slices
// of their own (in a run), and pods whose lists differ in one image only
// or in length.
func TestPodsPerRegistryAsPerPod(t *testing.T) {
	c := func(images ...string) []snapshot.Container {
		var out []snapshot.Container
		for _, im := range images {
			out = append(out, snapshot.Container{Name: "c", Image: im})
		}
		return out
	}
	shared := c("quay.io/a/b:1", "registry.k8s.io/pause:3.9", "quay.io/c:2")
	other := c("nginx:1.27")
	lists := [][]snapshot.Container{shared, shared, shared, other, other, shared, nil,
		c("quay.io/a/b:1", "registry.k8s.io/pause:3.9", "quay.io/c:2"), c("${IMAGE}"), c(""), shared[:1], shared[:1], shared, c("gcr.io/x/y:1", "gcr.io/x/z:1"),
		c("quay.io/a/b:1", "nginx:1"), c("quay.io/a/b:1", "nginx:1"), c("quay.io/a/b:1", "gcr.io/x/y:1"), c("quay.io/a/b:1")}
	pods := make([]snapshot.Pod, len(lists))
	for i, cs := range lists {
		pods[i].Spec.Own()
		pods[i].Spec.Containers = cs
	}
	want := map[string]int{}
	for i := range pods {
		seen := map[string]bool{}
		for _, ct := range pods[i].Spec.Containers {
			if ct.Image != "" && !check.IsTemplated(ct.Image) && !seen[registryHost(ct.Image)] {
				seen[registryHost(ct.Image)] = true
				want[registryHost(ct.Image)]++
			}
		}
	}
	if got := podsPerRegistry(pods); !maps.Equal(got, want) {
		t.Errorf("podsPerRegistry = %v, want %v", got, want)
	}
	if want["quay.io"] != 12 || want["docker.io"] != 4 || want["gcr.io"] != 2 {
		t.Fatalf("the fixture counts %v, not the runs it was built with", want)
	}
	if got := podsPerRegistry(nil); len(got) != 0 {
		t.Errorf("no pods: %v", got)
	}
}
