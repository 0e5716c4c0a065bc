package checks

import "testing"

// TestWorkloadImageNeedsNamesRealChecks: the IDs --inspect-images keys on
// are registered checks, so renaming one cannot silently stop the pulls.
func TestWorkloadImageNeedsNamesRealChecks(t *testing.T) {
	for _, id := range []string{imageManifestCheckID, jvmCheckID} {
		if _, ok := Lookup(id); !ok {
			t.Errorf("%s is not a registered check", id)
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
