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

// TestFacetBalance is issue 26's balance rule: no root cause holds more
// than a fifth of the library, so that filtering by one still narrows it,
// and no facet has more than 25 values, so that its list stays readable.
func TestFacetBalance(t *testing.T) {
	lib, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	byRoot := map[string]int{}
	for _, c := range lib.Cases() {
		byRoot[c.RootCause.Category]++
	}
	n := len(lib.Cases())
	for id, k := range byRoot {
		if 5*k > n {
			t.Errorf("root cause %s holds %d of %d cases, over 20%%: file the cases under a more specific value", id, k, n)
		}
	}
	tax := lib.Taxonomy()
	for _, facet := range []string{FacetRootCause, FacetComponent, FacetSymptom, FacetFactor} {
		if k := len(tax.Terms(facet)); k > 25 || k == 0 {
			t.Errorf("facet %s has %d values, want 1 to 25", facet, k)
		}
	}
}
