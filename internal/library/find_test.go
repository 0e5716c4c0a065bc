package library

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	lib, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want string }{
		{"azure-cni-v2-glibc", "azure-cni-v2-glibc"},
		{"AZURE-CNI-V2-GLIBC", "azure-cni-v2-glibc"},
		{"azure-cni-v2-gl", "azure-cni-v2-glibc"},
		{"no-such-case-anywhere", ""},
	} {
		c, candidates, ok := lib.Find(tc.in)
		if ok != (tc.want != "") || c.ID != tc.want || len(candidates) != 0 {
			t.Errorf("Find(%q) = %q %v %v, want %q", tc.in, c.ID, candidates, ok, tc.want)
		}
	}
	// "a" starts many case IDs: refused, each candidate named.
	_, candidates, ok := lib.Find("A")
	if ok || len(candidates) < 2 {
		t.Fatalf("Find(A) = %v %v, want refused with candidates", candidates, ok)
	}
	for _, id := range candidates {
		if !strings.HasPrefix(id, "a") {
			t.Errorf("candidate %q does not start with a", id)
		}
	}
}
