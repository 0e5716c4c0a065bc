package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadPathsWithSkipsNonObjects(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app", "node.yaml"), "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n")
	writeFile(t, filepath.Join(dir, "app", "list.yaml"), "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n2}\nkind: List\n")
	writeFile(t, filepath.Join(dir, "app", "kustomization.yaml"), "resources: [node.yaml]\n")
	writeFile(t, filepath.Join(dir, "chart", "Chart.yaml"), "apiVersion: v2\nname: c\n")
	writeFile(t, filepath.Join(dir, "chart", "values.yaml"), "replicas: 3\n")
	writeFile(t, filepath.Join(dir, "chart", "templates", "ds.yaml"), "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: {{ .Release.Name }}}\n")
	writeFile(t, filepath.Join(dir, "ci.yml"), "# CI\nstages: [test]\n")

	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 2 {
		t.Errorf("%d nodes, want 2", len(s.Nodes))
	}
	joined := strings.Join(notes, "\n")
	for _, want := range []string{"kustomization.yaml: skipped, a Kustomize file", "Chart.yaml: skipped, a Helm chart",
		"values.yaml: skipped, part of the Helm chart", "ds.yaml: skipped, part of the Helm chart", "ci.yml: skipped, not a Kubernetes object"} {
		if !strings.Contains(joined, want) {
			t.Errorf("notes lack %q:\n%s", want, joined)
		}
	}
	if len(notes) != 5 {
		t.Errorf("%d notes:\n%s", len(notes), joined)
	}

	_, _, err = LoadPathsWith([]string{dir}, LoadOptions{Strict: true})
	var ie *InputError
	if !errors.As(err, &ie) {
		t.Errorf("--strict: err %v, want an input error", err)
	}
	// A file named on the command line is never skipped.
	if _, _, err := LoadPathsWith([]string{filepath.Join(dir, "ci.yml")}, LoadOptions{}); !errors.As(err, &ie) {
		t.Errorf("a named non-object file: %v", err)
	}
	only := t.TempDir()
	writeFile(t, filepath.Join(only, "kustomization.yaml"), "resources: []\n")
	if _, _, err := LoadPathsWith([]string{only}, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "no Kubernetes objects") {
		t.Errorf("a directory of nothing but skipped files: %v", err)
	}
}

func TestLoadPathsWithStdin(t *testing.T) {
	in := strings.NewReader("apiVersion: v1\nkind: Node\nmetadata: {name: from-stdin}\n")
	s, _, err := LoadPathsWith([]string{Stdin}, LoadOptions{Stdin: in})
	if err != nil || len(s.Nodes) != 1 || s.Nodes[0].Name != "from-stdin" {
		t.Fatalf("%v %+v", err, s)
	}
	_, _, err = LoadPathsWith([]string{Stdin}, LoadOptions{Stdin: strings.NewReader("kind: [")})
	if err == nil || !strings.HasPrefix(err.Error(), "standard input:") {
		t.Errorf("bad stdin: %v", err)
	}
}
