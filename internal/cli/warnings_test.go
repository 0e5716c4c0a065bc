package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuditWarnsOfDuplicateKeys: a manifest with a key given twice is
// audited as kubectl reads it (last value wins), with one warning line on
// stderr naming the file, document and key; the report stays on stdout.
func TestAuditWarnsOfDuplicateKeys(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ds.yaml")
	os.WriteFile(p, []byte(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: kube-system}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers:
      - name: agent
        image: agent:1.0
        image: agent:2.0
`), 0o644)
	code, out, errOut := runKubegap(t, "audit", "--from", p, "-o", "json")
	if code == ExitError {
		t.Fatalf("exit 2: %s", errOut)
	}
	want := "kubegap: warning: " + p + `: document 1: key "spec.template.spec.containers[0].image" is given twice (lines 11 and 12); the last value is used`
	if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, want) {
		t.Errorf("stderr = %q, want one line starting %q", errOut, want)
	}
	if strings.Contains(out, "warning") || !strings.Contains(out, `"kind": "AuditReport"`) {
		t.Errorf("stdout is not the report alone: %.200s", out)
	}

	// A dump repeating one mistake in every object prints a bounded
	// number of lines.
	var b strings.Builder
	for i := range maxWarnings + 5 {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Node\nmetadata: {name: n%d, name: n%d}\n", i, i)
	}
	many := filepath.Join(dir, "nodes.yaml")
	os.WriteFile(many, []byte(b.String()), 0o644)
	_, _, errOut = runKubegap(t, "audit", "--from", many, "-q")
	lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
	if len(lines) != maxWarnings+1 || lines[maxWarnings] != "kubegap: warning: 5 more warnings not shown" {
		t.Errorf("stderr has %d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
