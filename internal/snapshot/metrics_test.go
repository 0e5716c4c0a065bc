package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// metricsFixture is a trimmed copy of what kube-apiserver v1.37.2 printed
// on GET /metrics on the test bed, after requests to deprecated versions.
const metricsFixture = "testdata/metrics/metrics.txt"

func TestLoadMetricsFileByContent(t *testing.T) {
	// Named as no recipe names it: known by its # HELP start.
	dir := t.TempDir()
	b, err := os.ReadFile(metricsFixture)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "apiserver-scrape")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(APIServerMetrics); c.Status != StatusRead || !c.Complete || c.Count == 0 {
		t.Fatalf("coverage %+v", c)
	}
	var dra *DeprecatedAPIRequest
	for i, d := range s.DeprecatedAPIRequests {
		if d.Group == "resource.k8s.io" && d.Version == "v1beta1" && d.Resource == "deviceclasses" {
			dra = &s.DeprecatedAPIRequests[i]
		}
	}
	if dra == nil || dra.RemovedRelease != "1.38" || dra.Value != "1" || dra.From != p {
		t.Fatalf("series: %+v", s.DeprecatedAPIRequests)
	}
}

// A recipe dump without metrics.txt (made before the recipe dumped it):
// /metrics is not in the input, never "no deprecated usage".
func TestMetricsNotInInput(t *testing.T) {
	dir := t.TempDir()
	aks := "../checks/testdata/managed/aks"
	entries, err := os.ReadDir(aks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == RecipeMetrics {
			continue
		}
		b, err := os.ReadFile(filepath.Join(aks, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(Nodes); !c.Complete {
		t.Fatalf("nodes %+v: not read as a recipe dump", c)
	}
	if c := s.Status(APIServerMetrics); c.Status != StatusNotInInput || c.Complete {
		t.Fatalf("coverage %+v, want not in the input", c)
	}
}

func TestMetricsInRecipeDumpAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	aks := "../checks/testdata/managed/aks"
	entries, err := os.ReadDir(aks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == RecipeMetrics {
			continue // replaced below by the test bed's
		}
		b, err := os.ReadFile(filepath.Join(aks, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := os.ReadFile(metricsFixture)
	if err := os.WriteFile(filepath.Join(dir, RecipeMetrics), m, 0o600); err != nil {
		t.Fatal(err)
	}
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, RecipeMetrics) {
			t.Errorf("skipped: %s", n)
		}
	}
	n := len(s.DeprecatedAPIRequests)
	if c := s.Status(APIServerMetrics); c.Status != StatusRead || n == 0 {
		t.Fatalf("coverage %+v, %d series", c, n)
	}
	// The recipe dump's other resources stay complete beside it.
	if c := s.Status(Nodes); !c.Complete {
		t.Errorf("nodes no longer complete: %+v", c)
	}
	// snapshot, then --from snapshot: the series and the coverage stay.
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	snapPath := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(snapPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{snapPath})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.DeprecatedAPIRequests) != n || back.DeprecatedAPIRequests[0] != s.DeprecatedAPIRequests[0] {
		t.Fatalf("after the snapshot: %+v, want %+v", back.DeprecatedAPIRequests, s.DeprecatedAPIRequests)
	}
	if c := back.Status(APIServerMetrics); c.Status != StatusRead || !c.Complete {
		t.Fatalf("coverage after the snapshot: %+v", c)
	}
}

func TestBadMetricsFileIsAnInputError(t *testing.T) {
	good, _ := os.ReadFile(metricsFixture)
	cut := bytes.Index(good, []byte("# HELP apiserver_requested_deprecated_apis"))
	for name, body := range map[string][]byte{
		"truncated mid-line":       good[:len(good)-5],
		"truncated before":         good[:cut],
		"garbage named metrics":    []byte("this is not metrics\n{{{\n"),
		"garbage after a # HELP":   append([]byte("# HELP apiserver_request_total x\n"), []byte("}}} ]]\n")...),
		"empty file named metrics": {},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, RecipeMetrics)
			if err := os.WriteFile(p, body, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPaths([]string{p})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
}

func TestRecipeScriptDumpsMetrics(t *testing.T) {
	script := RecipeScript([]Resource{Nodes, APIServerMetrics})
	if !strings.Contains(script, "dump metrics.txt get --raw /metrics\n") {
		t.Fatalf("script:\n%s", script)
	}
}
