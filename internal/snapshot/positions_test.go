package snapshot

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"
)

func TestPositions(t *testing.T) {
	dir := t.TempDir()
	multi := `# a comment
apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
  namespace: kube-system
spec: {}
`
	list := `{
  "apiVersion": "v1",
  "kind": "List",
  "items": [
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "web"}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "p2"}}
  ]
}`
	os.WriteFile(filepath.Join(dir, "multi.yaml"), []byte(multi), 0o644)
	os.WriteFile(filepath.Join(dir, "list.json"), []byte(list), 0o644)
	gz, _ := os.Create(filepath.Join(dir, "z.yaml.gz"))
	zw := gzip.NewWriter(gz)
	zw.Write([]byte("\n\nkind: Service\napiVersion: v1\nmetadata: {name: s, namespace: a}\n"))
	zw.Close()
	gz.Close()
	os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [\n"), 0o644)

	p := Positions([]string{dir})
	for _, c := range []struct {
		kind, ns, name, file string
		line                 int
	}{
		{"Node", "", "n1", "multi.yaml", 2},
		{"DaemonSet", "kube-system", "agent", "multi.yaml", 7},
		{"Pod", "web", "p1", "list.json", 5},
		{"Pod", "default", "p2", "list.json", 6},
		{"Service", "a", "s", "z.yaml.gz", 3},
	} {
		pos, ok := p.Lookup(c.kind, c.ns, c.name)
		if !ok || pos.File != filepath.Join(dir, c.file) || pos.Line != c.line {
			t.Errorf("%s %s/%s: %+v %v, want %s:%d", c.kind, c.ns, c.name, pos, ok, c.file, c.line)
		}
	}
	if _, ok := p.Lookup("Pod", "web", "p2"); ok {
		t.Error("found an object in the wrong namespace")
	}
}
