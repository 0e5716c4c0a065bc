package library

import (
	"strings"
	"testing"
)

// TestEmbeddedLibraryAcceptance: the shipped library has at least 35
// cases, the four founding ones among them, each with an http(s) source.
func TestEmbeddedLibraryAcceptance(t *testing.T) {
	lib, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(lib.Cases()); n < 35 {
		t.Errorf("the library has %d cases, want at least 35", n)
	}
	for _, id := range []string{"azure-cni-v2-glibc", "ubuntu-systemd-dns-2022", "daemonset-pull-always-nat-ratelimit", "containerd-chained-cni-regression"} {
		if _, ok := lib.Case(id); !ok {
			t.Errorf("founding case %s is missing", id)
		}
	}
	for _, c := range lib.Cases() {
		ok := false
		for _, s := range c.Sources {
			if strings.HasPrefix(s.URL, "https://") || strings.HasPrefix(s.URL, "http://") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("case %s has no http(s) source", c.ID)
		}
	}
}
