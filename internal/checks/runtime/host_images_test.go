package runtime

import "testing"

// TestWorkloadImageNeedsNamesRealChecks: the IDs --inspect-images keys on
// are checks of this package, so renaming one cannot silently stop the
// pulls.
func TestWorkloadImageNeedsNamesRealChecks(t *testing.T) {
	ids := map[string]bool{}
	for _, c := range Checks() {
		ids[c.ID] = true
	}
	for _, id := range []string{imageManifestCheckID, jvmCheckID} {
		if !ids[id] {
			t.Errorf("%s is not a check of this package", id)
		}
	}
	if m, f := WorkloadImageNeeds([]string{imageManifestCheckID}); !m || f {
		t.Errorf("manifest check: manifests %v files %v, want manifests only", m, f)
	}
	if m, f := WorkloadImageNeeds([]string{jvmCheckID}); !m || !f {
		t.Errorf("jvm check: manifests %v files %v, want both", m, f)
	}
	if m, f := WorkloadImageNeeds([]string{"host-binary-glibc"}); m || f {
		t.Errorf("host-binary-glibc: manifests %v files %v, want neither", m, f)
	}
}
