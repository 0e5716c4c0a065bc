package snapshot

import (
	"os"
	"path/filepath"
	"testing"
)

// TestConvertedOnLoad: an object the loader converts from an older version
// is marked so, whether it comes as a YAML document or as an item of a
// kubectl List (decoded in parallel); one that carries kubegap's
// annotation in the input already is not.
func TestConvertedOnLoad(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"doc.yaml": "apiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: old, namespace: web}\n" +
			"spec: {template: {metadata: {labels: {app: old}}, spec: {containers: [{name: c, image: x}]}}}\n",
		"list.json": `{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
			"metadata": {"name": "listed", "namespace": "batch"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"a": "b"}}}}]}`,
		"annotated.yaml": "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: annotated, namespace: batch,\n" +
			"  annotations: {kubegap.dev/original-api-version: policy/v1beta1}}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		kind, ns, name string
		want           bool
	}{
		{"Deployment", "web", "old", true},
		{"PodDisruptionBudget", "batch", "listed", true},
		{"PodDisruptionBudget", "batch", "annotated", false},
	} {
		if got := s.ConvertedOnLoad(c.kind, c.ns, c.name); got != c.want {
			t.Errorf("%s %s/%s: converted on load %v, want %v", c.kind, c.ns, c.name, got, c.want)
		}
	}
}
