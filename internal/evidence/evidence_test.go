package evidence

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
)

func TestResolve(t *testing.T) {
	in, err := ReadPaths([]string{"testdata"})
	if err != nil {
		t.Fatal(err)
	}
	if in.Len() != 3 {
		t.Fatalf("read %d objects, want 3", in.Len())
	}
	node := finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: "n1"}
	ds := finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "default", Name: "agent"}
	pod := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "kube-system", Name: "p1"}
	for _, tc := range []struct {
		item finding.EvidenceItem
		bad  []string // substrings of the mismatches, in order; none: agrees
	}{
		{item: finding.Quote(node, finding.Value("status.nodeInfo.kubeletVersion", "v1.34.3"),
			finding.Value("metadata.labels[kubernetes.io/os]", "linux"), finding.Value("status.allocatable.pods", "110"))},
		{item: finding.Quote(node, finding.Value("status.nodeInfo.kubeletVersion", "v1.35.4")),
			bad: []string{`evidence says "v1.35.4", input has "v1.34.3"`}},
		{item: finding.Quote(node, finding.Absent("spec.taints"))},
		{item: finding.Quote(node, finding.Value("spec.providerID", ""))}, // "" is absent, as the API omits it
		{item: finding.Quote(node, finding.Absent("status.nodeInfo")), bad: []string{"evidence says no such field"}},
		// A label present with an empty value is quoted as "", not absent.
		{item: finding.Quote(node, finding.Entry("metadata.labels[node-role.kubernetes.io/control-plane]", ""))},
		{item: finding.Quote(node, finding.Entry("metadata.labels[kubernetes.io/os]", "")), bad: []string{`input has "linux"`}},
		{item: finding.Quote(node, finding.Entry("metadata.labels[node-role.kubernetes.io/master]", "")), bad: []string{"input has no such field"}},
		{item: finding.Quote(ds, finding.Value("spec.template.spec.containers[name=b].image", "example.com/b:2"),
			finding.Value("spec.template.spec.containers[0].image", "example.com/a:1"),
			finding.Value("spec.template.spec.containers[name=b].ports[0].containerPort", 8080))},
		{item: finding.Quote(ds, finding.Value("spec.template.spec.containers[name=c].image", "example.com/b:2")),
			bad: []string{"input has no such field"}},
		{item: finding.Quote(pod, finding.Value("spec.priority", int32(2000000000)), finding.Value("spec.hostNetwork", true))},
		{item: finding.Quote(finding.ObjectRef{Kind: "Node", Name: "n2"}, finding.Value("metadata.name", "n2")),
			bad: []string{"no such object"}},
		{item: finding.Quote(node, finding.Value("status[", "x")), bad: []string{"unclosed ["}},
	} {
		got := in.Resolve(tc.item)
		if len(got) != len(tc.bad) {
			t.Errorf("%s: mismatches %v, want %d", tc.item, got, len(tc.bad))
			continue
		}
		for i, m := range got {
			if !strings.Contains(m.String(), tc.bad[i]) {
				t.Errorf("%s: mismatch %q, want it to say %q", tc.item, m, tc.bad[i])
			}
		}
	}
}
