package availability

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// mybinder.org before the cordon: both ingress endpoints on the old pool
// while a newer pool runs, medium; once the old nodes are cordoned the
// high rule takes over; with the endpoints on the new pool, quiet.
func TestDisruptionRetiringPool(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "disruption-exposure/mybinder-before-cordon.yaml"))
	fs, _, _ := checktest.Run(t, disruptionExposureCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Title, "older than pool cloud.google.com/gke-nodepool=user-new") {
		t.Fatalf("findings %+v, want one medium naming the newer pool", fs)
	}
	if !checktest.HasObject(fs, "Node", "", "gke-prod-user-old-0") || !slices.Contains(fs[0].Cases, caseMybinder) {
		t.Errorf("objects %v, cases %v", fs[0].Objects, fs[0].Cases)
	}

	// The same cluster as files: the old nodes cordoned, then upgraded.
	raw, err := os.ReadFile(filepath.Join("testdata", "disruption-exposure", "mybinder-before-cordon.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(from, to string) *snapshot.Snapshot {
		p := filepath.Join(t.TempDir(), "variant.yaml")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(raw), from, to)), 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := snapshot.LoadPaths([]string{p})
		if err != nil {
			t.Fatal(err)
		}
		return checktest.Complete(v)
	}
	oldSpec := `spec: {providerID: "gce://binder-prod/us-central1-a/gke-prod-user-old-`
	fs, _, _ = checktest.Run(t, disruptionExposureCheck(), variant(oldSpec, `spec: {unschedulable: true, providerID: "gce://binder-prod/us-central1-a/gke-prod-user-old-`))
	if len(fs) != 1 || fs[0].Severity != finding.High {
		t.Errorf("after the cordon: %+v, want the one high finding of endpoints-on-cordoned-nodes", fs)
	}
	checktest.Quiet(t, disruptionExposureCheck(), variant("v1.11.7-gke.12", "v1.12.6-gke.10"))
}
