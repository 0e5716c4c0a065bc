package versions

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestStaleTokenClientsEvidenceItems: each finding quotes the affected
// pods' images (grouped) and the creation time of the oldest pod, the
// age the severity is judged by; every item resolves against the fixture.
// One pod is "1 pod runs", not "1 pods run".
func TestStaleTokenClientsEvidenceItems(t *testing.T) {
	const file = "stale-token-clients/gap.yaml"
	fs, _, _ := checktest.Run(t, staleTokenClientsCheckAt(staleNow), checktest.Complete(checktest.Load(t, file)))
	want := map[string][]string{
		"kiali": {
			"Pod/istio-system/kiali-7f9c-abcde: spec.containers[name=main].image=quay.io/kiali/kiali:v1.45.0",
			"Pod/istio-system/kiali-7f9c-abcde: metadata.creationTimestamp=2026-07-01T00:00:00Z",
		},
		"kiam": {
			"2 Pods (kube-system/kiam-server-a1, kube-system/kiam-server-b2): spec.containers[name=main].image=quay.io/uswitch/kiam:v3.6",
			"Pod/kube-system/kiam-server-a1: metadata.creationTimestamp=2026-11-01T00:00:00Z",
		},
	}
	for _, f := range fs {
		name := strings.Fields(f.Title)[0]
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if len(got) == 0 {
			t.Errorf("%s: no evidence items", f.Title)
		}
		if w, ok := want[name]; ok && strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: items\n  %q\nwant\n  %q", name, got, w)
		}
		if text := strings.Join(append(f.Evidence, f.Message), "\n"); strings.Contains(text, "1 pods run") {
			t.Errorf("%s: %q", name, text)
		}
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 4 {
		t.Errorf("%d items resolved, want images and oldest pod of both findings", n)
	}
}
