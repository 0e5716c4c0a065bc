package snapshot

import (
	"path/filepath"
	"strings"
	"testing"
)

const authRequestYAML = `apiVersion: dex.coreos.com/v1
kind: AuthRequest
metadata: {name: %s, namespace: dex}
clientID: app
`

// Counted resources from files are counted, never kept.
func TestCountOnlyObjectsAreCountedNotKept(t *testing.T) {
	dir := t.TempDir()
	var docs []string
	for _, n := range []string{"a", "b", "c"} {
		docs = append(docs, strings.ReplaceAll(authRequestYAML, "%s", n))
	}
	s, err := LoadPaths([]string{write(t, dir, "ar.yaml", []byte(strings.Join(docs, "---\n")))})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Count(DexAuthRequests); got != 3 {
		t.Errorf("count = %d, want 3", got)
	}
	if objs := s.CustomObjects(DexAuthRequests); len(objs) != 0 {
		t.Errorf("kept %d AuthRequests, want none", len(objs))
	}
	if c := s.Status(DexAuthRequests); c.Complete || c.Count != 3 {
		t.Errorf("coverage = %+v, want 3 counted, not complete (plain files)", c)
	}

	// A snapshot keeps the count in its coverage.
	out := filepath.Join(dir, "snap.json")
	if err := s.SaveFile(out); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Count(DexAuthRequests); got != 3 {
		t.Errorf("count after a snapshot round trip = %d, want 3", got)
	}
}

// A recipe dump's count file holds one page of limit=1: the count is its
// items plus remainingItemCount, complete; without remainingItemCount and
// with more pages it is a lower bound, never complete.
func TestRecipeCountFiles(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		want     int
		complete bool
		err      string
	}{
		{"remaining", `{"kind":"AuthRequestList","apiVersion":"dex.coreos.com/v1","metadata":{"continue":"x","remainingItemCount":41999},"items":[{"metadata":{"name":"a"}}]}`, 42000, true, ""},
		{"last page", `{"kind":"AuthRequestList","metadata":{},"items":[{"metadata":{"name":"a"}}]}`, 1, true, ""},
		{"empty", `{"kind":"AuthRequestList","metadata":{},"items":[]}`, 0, true, ""},
		{"no count", `{"kind":"AuthRequestList","metadata":{"continue":"x"},"items":[{"metadata":{"name":"a"}}]}`, 1, false, ""},
		{"not a list", `{"kind":"AuthRequest","metadata":{"name":"a"}}`, 0, false, "not a List"},
		{"negative", `{"kind":"AuthRequestList","metadata":{"continue":"x","remainingItemCount":-5},"items":[{}]}`, 0, false, "negative"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, RecipeAPIResources, []byte("pods\nauthrequests.dex.coreos.com\n"))
			write(t, dir, "authrequests.dex.coreos.com"+RecipeCountSuffix, []byte(tc.body))
			s, err := LoadPaths([]string{dir})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c := s.Status(DexAuthRequests)
			if c.Count != tc.want || c.Complete != tc.complete {
				t.Errorf("coverage = %+v, want count %d complete %v", c, tc.want, tc.complete)
			}
		})
	}
}

func TestRecipeScriptCountsWithLimitOne(t *testing.T) {
	script := RecipeScript([]Resource{DexAuthRequests, Pods})
	want := "dump authrequests.dex.coreos.com.count.json get --raw '/apis/dex.coreos.com/v1/authrequests?limit=1'"
	if !strings.Contains(script, want) {
		t.Errorf("script lacks %q:\n%s", want, script)
	}
	if strings.Contains(script, "get authrequests") {
		t.Error("script lists AuthRequests whole")
	}
}

// Limiting a snapshot to some namespaces cannot split a count.
func TestRestrictDropsCounts(t *testing.T) {
	s := New(Source{})
	s.AddCount(EventCounts, 10)
	s.SetCoverage(EventCounts, StatusRead, "")
	s.SetComplete(EventCounts, nil)
	if err := s.Restrict([]string{"a"}); err != nil {
		t.Fatal(err)
	}
	if c := s.Status(EventCounts); c.Complete || c.Count != 0 {
		t.Errorf("coverage after Restrict = %+v", c)
	}
}
