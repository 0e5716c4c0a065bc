package snapshot

import (
	"strings"
	"testing"
)

// TestRecipeDumpThroughLoadPathsWith: the CLI's loader keeps a recipe
// dump's api-resources.txt (it is no Kubernetes object, yet not a file to
// skip), so what it does not list is not served, and complete.
func TestRecipeDumpThroughLoadPathsWith(t *testing.T) {
	s, notes, err := LoadPathsWith([]string{"../checks/testdata/managed/aks"}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, RecipeAPIResources) || strings.Contains(n, RecipeVersion) {
			t.Errorf("skipped a recipe file: %s", n)
		}
	}
	if c := s.Status(NetworkAttachmentDefinitions); c.Status != StatusNotServed || !c.Complete {
		t.Errorf("NADs: %+v, want not-served and complete", c)
	}
	if s.Source.ServerVersion == "" {
		t.Error("version.json not read")
	}
}
