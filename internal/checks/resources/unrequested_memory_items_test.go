package resources

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestUnrequestedMemoryEvidenceItems: each pool finding quotes the pool's
// nodes by their pool label and the pods asking for no memory, grouped by
// the container whose request and limit are absent; every item resolves
// against the fixture.
func TestUnrequestedMemoryEvidenceItems(t *testing.T) {
	const file = "unrequested-memory/gap.yaml"
	fs, _, _ := checktest.Run(t, unrequestedMemoryCheck(), checktest.Complete(checktest.Load(t, file)))
	var lines []string
	for _, f := range fs {
		if len(f.EvidenceItems) < 2 {
			t.Errorf("%s: items %v, want the pool's nodes and its pods", f.Title, f.EvidenceItems)
		}
		for _, it := range f.EvidenceItems {
			lines = append(lines, it.String())
		}
	}
	const bare = "spec.containers[name=app].resources.requests.memory absent, spec.containers[name=app].resources.limits.memory absent"
	want := []string{
		"Node/batch-a: metadata.labels[cloud.google.com/gke-nodepool]=batch",
		"3 Pods (jobs/worker-0, jobs/worker-1, jobs/worker-2): " + bare,
		"2 Nodes (sandbox-a, sandbox-b): metadata.labels[cloud.google.com/gke-nodepool]=sandbox",
		"8 Pods (customers/preview-0, customers/preview-1, customers/solution-0, customers/solution-1, customers/solution-2, " +
			"customers/solution-3, customers/solution-4, customers/solution-5): " + bare,
	}
	if got, w := strings.Join(lines, "\n"), strings.Join(want, "\n"); got != w {
		t.Errorf("items\n%s\nwant\n%s", got, w)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// TestUnrequestedMemoryNodesNotInInput: pods whose nodes the input does
// not hold are in no known pool; the finding must not call them "nodes
// without a pool label", which is what it said.
func TestUnrequestedMemoryNodesNotInInput(t *testing.T) {
	s := checktest.Load(t, "unrequested-memory/gap.yaml")
	s.Nodes = nil
	fs, _, _ := checktest.Run(t, unrequestedMemoryCheck(), s)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	f := fs[0]
	if text := f.Title + "\n" + f.Message; strings.Contains(text, "without a pool label") || !strings.Contains(text, "not in the input") {
		t.Errorf("title and message: %s", text)
	}
}
