package checks

import (
	"strings"
	"testing"
)

func TestFind(t *testing.T) {
	for _, tc := range []struct {
		in, want   string
		candidates string
	}{
		{"host-binary-glibc", "host-binary-glibc", ""},
		{"HOST-BINARY-GLIBC", "host-binary-glibc", ""},
		{" version-skew ", "version-skew", ""},
		{"host-binary-g", "host-binary-glibc", ""},
		{"nope-such-check", "", ""},
		{"", "", ""},
	} {
		c, candidates, ok := Find(tc.in)
		if ok != (tc.want != "") || c.ID != tc.want || strings.Join(candidates, ",") != tc.candidates {
			t.Errorf("Find(%q) = %q %v %v, want %q", tc.in, c.ID, candidates, ok, tc.want)
		}
	}
	// A prefix two IDs share is refused with both named.
	var shared string
	all := All()
	for i := range all {
		for j := range all {
			if i != j && strings.HasPrefix(all[j].ID, all[i].ID[:3]) && shared == "" {
				shared = all[i].ID[:3]
			}
		}
	}
	if shared == "" {
		t.Skip("no two check IDs share a 3-letter prefix")
	}
	_, candidates, ok := Find(strings.ToUpper(shared))
	if ok || len(candidates) < 2 {
		t.Errorf("Find(%q) = %v %v, want refused with the candidates", shared, candidates, ok)
	}
	for _, id := range candidates {
		if !strings.HasPrefix(id, shared) {
			t.Errorf("candidate %q does not start with %q", id, shared)
		}
	}
}

func TestNearest(t *testing.T) {
	ids := []string{"host-binary-glibc", "host-images", "version-skew", "image-pull-always"}
	for _, tc := range []struct{ in, want string }{
		{"verison-skew", "version-skew"},
		{"verison", "version-skew"},
		{"HOST-IMAGE", "host-images"},
		{"binary", "host-binary-glibc"},
		{"zzzzzzzzzz", ""},
	} {
		if got := strings.Join(Nearest(tc.in, ids, 3), ","); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
