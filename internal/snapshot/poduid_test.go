package snapshot

import (
	"testing"
	"unsafe"

	json "github.com/go-json-experiment/json"
	"k8s.io/apimachinery/pkg/types"
)

// A PodUID gives back exactly the UID it was made from, whatever its
// spelling, and compares with UIDs as the strings would.
func TestPodUIDRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		uid      types.UID
		compact  bool
		notEqual types.UID
	}{
		{"b688fe2c-bfbe-8469-82dd-f779baac1d94", true, "b688fe2c-bfbe-8469-82dd-f779baac1d95"},
		{"B688FE2C-BFBE-8469-82DD-F779BAAC1D94", false, "b688fe2c-bfbe-8469-82dd-f779baac1d94"},
		{"00000000-0000-0000-0000-000000000000", false, ""},
		{"pod-17", false, "pod-18"},
		{"b688fe2c-bfbe-8469-82dd-f779baac1d9", false, "b688fe2c-bfbe-8469-82dd-f779baac1d94"},
		{"b688fe2cxbfbe-8469-82dd-f779baac1d94", false, "b688fe2c-bfbe-8469-82dd-f779baac1d94"},
		{"", false, "b688fe2c-bfbe-8469-82dd-f779baac1d94"},
	} {
		u := MakePodUID(tc.uid)
		if got := u.UID(); got != tc.uid {
			t.Errorf("MakePodUID(%q).UID() = %q", tc.uid, got)
		}
		if compact := u.other == nil && tc.uid != ""; compact != tc.compact {
			t.Errorf("%q held as bytes: %v, want %v", tc.uid, compact, tc.compact)
		}
		if !u.Is(tc.uid) || u.Is(tc.notEqual) {
			t.Errorf("%q: Is(itself) = %v, Is(%q) = %v", tc.uid, u.Is(tc.uid), tc.notEqual, u.Is(tc.notEqual))
		}
		if u.IsZero() != (tc.uid == "") {
			t.Errorf("%q: IsZero() = %v", tc.uid, u.IsZero())
		}
		b, err := json.Marshal(u)
		var back PodUID
		if err != nil || json.Unmarshal(b, &back) != nil || back.UID() != tc.uid {
			t.Errorf("%q through JSON: %s, read back %q (%v)", tc.uid, b, back.UID(), err)
		}
	}
	if n := unsafe.Sizeof(PodUID{}); n != 24 {
		t.Errorf("a PodUID takes %d bytes, want 24", n)
	}
}
