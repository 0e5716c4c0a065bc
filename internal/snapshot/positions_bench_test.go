package snapshot

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// manifestsDir writes n DaemonSet manifests, 50 to a multi-document file,
// as a repository of manifests holds them.
func manifestsDir(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	for f := 0; f*50 < n; f++ {
		var sb strings.Builder
		for i := f * 50; i < min(n, (f+1)*50); i++ {
			fmt.Fprintf(&sb, `---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent-%05d
  namespace: team-%02d
  labels: {app: agent-%05d}
spec:
  selector: {matchLabels: {app: agent-%05d}}
  template:
    metadata: {labels: {app: agent-%05d}}
    spec:
      containers:
      - name: agent
        image: registry.example.com/agent:1.2.%d
        imagePullPolicy: IfNotPresent
        env: [{name: MODE, value: fast}]
`, i, i%20, i, i, i, i)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.yaml", f)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkLoadManifests and BenchmarkPositions compare loading 5,000
// manifests with the second pass -o sarif makes for file and line.
func BenchmarkLoadManifests(b *testing.B) {
	dir := manifestsDir(b, 5000)
	for b.Loop() {
		if _, err := LoadPaths([]string{dir}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPositions(b *testing.B) {
	dir := manifestsDir(b, 5000)
	for b.Loop() {
		if p := Positions([]string{dir}); len(p) != 5000 {
			b.Fatalf("%d positions", len(p))
		}
	}
}
