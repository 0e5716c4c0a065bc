package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestRemovedAPIsEvidenceItems: a manifest of a kind kubegap keeps as
// written quotes its apiVersion, and so does one the loader converted as
// it read it (the file holds it in the old version). Every item resolves.
func TestRemovedAPIsEvidenceItems(t *testing.T) {
	const file = "old-manifests.yaml"
	fs, _ := runWith(t, removedAPIsCheck(), at(checktest.Load(t, file), "v1.33.2"), nil)
	want := map[string]string{
		"networking.k8s.io/v1beta1 Ingress":               "Ingress/web/shop: apiVersion=networking.k8s.io/v1beta1",
		"policy/v1beta1 PodSecurityPolicy":                "PodSecurityPolicy/restricted: apiVersion=policy/v1beta1",
		"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema": "FlowSchema/batch-jobs: apiVersion=flowcontrol.apiserver.k8s.io/v1beta3",
		"apps/v1beta1 Deployment":                         "Deployment/web/legacy-api: apiVersion=apps/v1beta1",
	}
	for _, f := range fs {
		for gvk, item := range want {
			if !strings.Contains(f.Title, gvk) {
				continue
			}
			delete(want, gvk)
			if len(f.EvidenceItems) != 1 || f.EvidenceItems[0].String() != item || !slices.Contains(f.Evidence, item) {
				t.Errorf("%s: items %v, want %q", gvk, f.EvidenceItems, item)
			}
		}
	}
	for gvk := range want {
		t.Errorf("no finding on %s", gvk)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 4 {
		t.Errorf("%d items resolved, want 4", n)
	}
}

// TestRemovedAPIsConvertedNotQuotedAsRead: a budget whose original
// version is in kubegap's annotation (the file says apiVersion policy/v1)
// must not be said to have apiVersion policy/v1beta1 in the input: it
// quotes the annotation the file holds.
func TestRemovedAPIsConvertedNotQuotedAsRead(t *testing.T) {
	const file = "../../availability/testdata/pdb-blocks-drain/v1beta1.yaml"
	fs, _ := runWith(t, removedAPIsCheck(), checktest.Load(t, file), nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	ev := strings.Join(fs[0].Evidence, "\n")
	if strings.Contains(ev, "apiVersion=policy/v1beta1") || !strings.Contains(ev, "PodDisruptionBudget/batch/legacy: metadata.annotations[kubegap.dev/original-api-version]=policy/v1beta1") {
		t.Errorf("evidence %q", ev)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 1 {
		t.Errorf("%d items resolved, want 1", n)
	}
}
