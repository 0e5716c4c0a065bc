package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestRemovedAPIsEvidenceItems: a manifest of a kind kubegap keeps as
// written quotes its apiVersion; one the loader converted says where its
// version was read, in words (the input holds it in apiVersion or, when
// kubegap wrote the file, in an annotation). Every item resolves.
func TestRemovedAPIsEvidenceItems(t *testing.T) {
	const file = "old-manifests.yaml"
	fs, _ := runWith(t, removedAPIsCheck(), at(checktest.Load(t, file), "v1.33.2"), nil)
	want := map[string]string{
		"networking.k8s.io/v1beta1 Ingress":               "Ingress/web/shop: apiVersion=networking.k8s.io/v1beta1",
		"policy/v1beta1 PodSecurityPolicy":                "PodSecurityPolicy/restricted: apiVersion=policy/v1beta1",
		"flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema": "FlowSchema/batch-jobs: apiVersion=flowcontrol.apiserver.k8s.io/v1beta3",
		"apps/v1beta1 Deployment":                         "",
	}
	for _, f := range fs {
		for gvk, item := range want {
			if !strings.Contains(f.Title, gvk) {
				continue
			}
			delete(want, gvk)
			if item == "" {
				if len(f.EvidenceItems) != 0 || !strings.Contains(strings.Join(f.Evidence, "\n"), ": written in "+strings.Fields(gvk)[0]) {
					t.Errorf("%s: items %v, evidence %q; want the converted version in words", gvk, f.EvidenceItems, f.Evidence)
				}
				continue
			}
			if len(f.EvidenceItems) != 1 || f.EvidenceItems[0].String() != item || !slices.Contains(f.Evidence, item) {
				t.Errorf("%s: items %v, want %q", gvk, f.EvidenceItems, item)
			}
		}
	}
	for gvk := range want {
		t.Errorf("no finding on %s", gvk)
	}
	if n := checktest.EvidenceTrue(t, fs, file); n != 3 {
		t.Errorf("%d items resolved, want 3", n)
	}
}

// TestRemovedAPIsConvertedNotQuotedAsRead: a budget whose original
// version is in kubegap's annotation (the file says apiVersion policy/v1)
// must not be said to have "apiVersion policy/v1beta1 in the input", as
// the evidence did.
func TestRemovedAPIsConvertedNotQuotedAsRead(t *testing.T) {
	const file = "../../testdata/pdb-blocks-drain/v1beta1.yaml"
	fs, _ := runWith(t, removedAPIsCheck(), checktest.Load(t, file), nil)
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	ev := strings.Join(fs[0].Evidence, "\n")
	if strings.Contains(ev, "apiVersion policy/v1beta1 in the input") || !strings.Contains(ev, "PodDisruptionBudget/batch/legacy: written in policy/v1beta1") {
		t.Errorf("evidence %q", ev)
	}
	checktest.EvidenceTrue(t, fs, file)
}
