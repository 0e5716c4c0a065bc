package snapshot

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

const nodeYAML = `apiVersion: v1
kind: Node
metadata: {name: n1, annotations: {kubectl.kubernetes.io/last-applied-configuration: "{}"}, managedFields: [{manager: kubectl}]}
status: {nodeInfo: {osImage: Ubuntu 22.04.5 LTS}}
`

func write(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return b.Bytes()
}

func TestLoadFormats(t *testing.T) {
	dir := t.TempDir()
	list := `{"apiVersion":"v1","kind":"List","items":[
	  {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"a"},"spec":{"containers":[{"name":"c","image":"x","env":[{"name":"TOKEN","value":"s3cret"}]}]}},
	  {"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d","namespace":"kube-system"}}]}`
	multi := nodeYAML + "---\n# a comment-only document\n---\n" + `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nad, namespace: telco}
spec: {config: "{}"}
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
`
	files := []string{
		write(t, dir, "list.json", []byte(list)),
		write(t, dir, "multi.yaml", []byte(multi)),
		write(t, dir, "nodes.yaml.gz", gz(t, []byte(nodeYAML))), // same node again: deduplicated
	}
	s, err := LoadPaths(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 || len(s.Pods) != 1 || len(s.DaemonSets) != 1 {
		t.Fatalf("nodes=%d pods=%d daemonsets=%d, want 1 each", len(s.Nodes), len(s.Pods), len(s.DaemonSets))
	}
	if n := len(s.CustomObjects(NetworkAttachmentDefinitions)); n != 1 {
		t.Errorf("NetworkAttachmentDefinitions = %d, want 1", n)
	}
	if n := len(s.Custom["example.com/v1/Widget"]); n != 1 {
		t.Errorf("unknown kind Widget not kept: %d", n)
	}
	if b, err := json.Marshal(s.Pods[0].Object()); err != nil || bytes.Contains(b, []byte("s3cret")) {
		t.Errorf("env value kept: %s (%v)", b, err)
	}
	if s.Nodes[0].ManagedFields != nil || len(s.Nodes[0].Annotations) != 0 {
		t.Errorf("managedFields or last-applied annotation kept: %+v", s.Nodes[0].ObjectMeta)
	}
	if c := s.Status(Nodes); c.Status != StatusRead || c.Count != 1 {
		t.Errorf("nodes coverage = %+v", c)
	}
	if c := s.Status(PodDisruptionBudgets); c.Status != StatusNotInInput {
		t.Errorf("PDB coverage = %+v, want not-in-input", c)
	}
}

func TestLoadDirectoryWalksInputFiles(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", []byte(nodeYAML))
	write(t, dir, "README.md", []byte("# not an input"))
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	write(t, sub, "b.yml", []byte(strings.Replace(nodeYAML, "n1", "n2", 1)))
	s, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 2 {
		t.Fatalf("got %d nodes, want 2", len(s.Nodes))
	}
}

// TestBadInput: each kind of bad input is one error that names the file
// (and the document and item where there is one), never a panic or a
// silent skip.
func TestBadInput(t *testing.T) {
	full := gz(t, []byte(nodeYAML+"---\n"+nodeYAML))
	// Snapshots larger than one decode chunk, read while earlier chunks
	// are decoded: errors must still name the right item and stop the
	// reader.
	big := func(n int, broken func(i int) string) []byte {
		var b strings.Builder
		b.WriteString(snapshotHead + `"items":[`)
		for i := 1; i <= n; i++ {
			if i > 1 {
				b.WriteString(",")
			}
			if item := broken(i); item != "" {
				b.WriteString(item)
				continue
			}
			fmt.Fprintf(&b, `{"kind":"Node","apiVersion":"v1","metadata":{"name":"n%d"}}`, i)
		}
		b.WriteString("]}\n")
		return []byte(b.String())
	}
	bigN := 3*decodeChunk + 17
	none := func(int) string { return "" }
	noKind := func(i int) string {
		if i == 2*decodeChunk+5 {
			return `{"apiVersion":"v1","metadata":{"name":"x"}}`
		}
		return ""
	}
	dup := func(i int) string {
		if i == decodeChunk+1 {
			return `{"kind":"Node","apiVersion":"v1","metadata":{"name":"a","name":"b"}}`
		}
		return ""
	}
	whole := big(bigN, none)
	cases := []struct {
		name, file string
		data       []byte
		want       []string
	}{
		{"malformed YAML", "bad.yaml", []byte(nodeYAML + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: [unclosed\n"), []string{"bad.yaml: document 2", "malformed YAML"}},
		{"malformed JSON", "bad.json", []byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"}`), []string{"bad.json: document 1", "malformed JSON"}},
		{"List with a broken item", "list.json", []byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},{"apiVersion":"v1","metadata":{"name":"b"}}]}`), []string{"list.json: document 1, item 2", "no kind"}},
		{"object without kind", "nokind.yaml", []byte("apiVersion: v1\nmetadata: {name: x}\n"), []string{"nokind.yaml: document 1", "object has no kind"}},
		{"typed object without a name", "noname.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {namespace: a}\n"), []string{"noname.yaml: document 1", "Pod has no metadata.name"}},
		{"misspelt metadata key", "case.yaml", []byte("apiVersion: v1\nkind: Node\nMetadata: {name: x}\n"), []string{"case.yaml: document 1", "Node has no metadata.name"}},
		{"object without apiVersion", "noapi.yaml", []byte("kind: Node\nmetadata: {name: x}\n"), []string{"noapi.yaml: document 1", "Node has no apiVersion"}},
		{"wrong field type", "type.yaml", []byte("apiVersion: v1\nkind: Node\nmetadata: {name: x}\nspec: {unschedulable: maybe}\n"), []string{"type.yaml: document 1", "decoding Node"}},
		{"truncated gzip", "cut.yaml.gz", full[:len(full)/2], []string{"cut.yaml.gz", "truncated or corrupt"}},
		{"gzip with a bad checksum", "sum.yaml.gz", append(append([]byte{}, full[:len(full)-8]...), 0, 0, 0, 0, 0, 0, 0, 0), []string{"sum.yaml.gz", "truncated or corrupt"}},
		{"empty file", "empty.yaml", nil, []string{"empty.yaml", "empty"}},
		{"only comments", "comments.yaml", []byte("# nothing\n---\n"), []string{"comments.yaml", "no objects"}},
		{"a scalar, not an object", "scalar.json", []byte(`"hello"`), []string{"scalar.json: document 1", "not an object"}},
		{"snapshot of a future version", "future.json", []byte(`{"apiVersion":"kubegap.dev/v9","kind":"Snapshot"}`), []string{"future.json: document 1", "not supported"}},
		{"broken item deep in a large snapshot", "big.json", big(bigN, noKind), []string{fmt.Sprintf("big.json: document 1, item %d", 2*decodeChunk+5), "no kind"}},
		{"duplicate member in a snapshot item", "dup.json", big(bigN, dup), []string{"dup.json: document 1", "malformed JSON", "duplicate object member name"}},
		{"large snapshot cut in an item", "cut.json", whole[:len(whole)*2/3], []string{"cut.json: document 1", "malformed JSON"}},
		{"snapshot followed by another document", "two.json", append(append([]byte{}, whole...), "{}\n"...), []string{"two.json: document 2", "one document"}},
		{"truncated snapshot", "snap.json", []byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"Snapshot","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}},`), []string{"snap.json: document 1", "malformed JSON"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, t.TempDir(), tc.file, tc.data)
			_, err := LoadPaths([]string{p})
			if err == nil {
				t.Fatal("loaded bad input without an error")
			}
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Errorf("error is %T, want *InputError", err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
	t.Run("missing path", func(t *testing.T) {
		_, err := LoadPaths([]string{filepath.Join(t.TempDir(), "nope.yaml")})
		if err == nil || !strings.Contains(err.Error(), "nope.yaml: no such file") {
			t.Errorf("got %v", err)
		}
	})
}

// TestSnapshotRoundTrip: what Write saves, LoadPaths reads back to the same
// objects and the same coverage, gzipped or not.
func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "in.yaml", []byte(nodeYAML+`---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: a, labels: {app: x}}
spec: {nodeName: n1, containers: [{name: c, image: img:1, env: [{name: K, value: secret-value}]}]}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nad, namespace: telco}
spec: {config: "{}"}
`))
	s, err := LoadPaths([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	s.Source.ServerVersion = "v1.35.4"
	s.SetCoverage(PodDisruptionBudgets, StatusForbidden, "pdbs are forbidden")
	for _, name := range []string{"snap.json", "snap.json.gz"} {
		out := filepath.Join(dir, name)
		if err := s.SaveFile(out); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(out)
		if bytes.Contains(raw, []byte("secret-value")) {
			t.Fatal("snapshot holds an environment variable value")
		}
		back, err := LoadPaths([]string{out})
		if err != nil {
			t.Fatal(err)
		}
		if back.Source.Type != SourceSnapshot || back.Source.ServerVersion != "v1.35.4" {
			t.Errorf("%s: source = %+v", name, back.Source)
		}
		if len(back.Nodes) != 1 || len(back.Pods) != 1 || len(back.CustomObjects(NetworkAttachmentDefinitions)) != 1 {
			t.Errorf("%s: objects lost: nodes=%d pods=%d", name, len(back.Nodes), len(back.Pods))
		}
		if c := back.Status(PodDisruptionBudgets); c.Status != StatusForbidden || c.Message != "pdbs are forbidden" {
			t.Errorf("%s: coverage not kept: %+v", name, c)
		}
		if back.Pods[0].Labels["app"] != "x" || back.Pods[0].Spec.NodeName != "n1" {
			t.Errorf("%s: pod fields lost: %+v", name, back.Pods[0])
		}
	}
}

func TestSaveFileLeavesNothingOnFailure(t *testing.T) {
	dir := t.TempDir()
	s := New(Source{Type: SourceFiles})
	s.Finish()
	if err := s.SaveFile(filepath.Join(dir, "missing-dir", "x.json")); err == nil {
		t.Fatal("saving into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left files behind: %v", entries)
	}
}

func TestEmptyTypedListIsRead(t *testing.T) {
	p := write(t, t.TempDir(), "deps.json", []byte(`{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{},"items":[]}
{"apiVersion":"v1","kind":"List","items":[]}`))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(Deployments); c.Status != StatusRead || c.Count != 0 {
		t.Errorf("an empty DeploymentList gives %+v, want read with 0 objects", c)
	}
	if c := s.Status(StatefulSets); c.Status != StatusNotInInput {
		t.Errorf("StatefulSets = %+v, want not-in-input (an untyped empty List names no kind)", c)
	}
}

func TestManifestWithoutNamespaceLandsInDefault(t *testing.T) {
	p := write(t, t.TempDir(), "ds.yaml", []byte(`apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
---
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: nad}
---
`+nodeYAML))
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if ns := s.DaemonSets[0].Namespace; ns != "default" {
		t.Errorf("DaemonSet namespace = %q, want default", ns)
	}
	if ns := s.CustomObjects(NetworkAttachmentDefinitions)[0].GetNamespace(); ns != "default" {
		t.Errorf("NAD namespace = %q, want default", ns)
	}
	if ns := s.Nodes[0].Namespace; ns != "" {
		t.Errorf("cluster-scoped Node got namespace %q", ns)
	}

	// Items of a List take the parallel decoding path: the same rule holds.
	p = write(t, t.TempDir(), "list.json", []byte(`{"apiVersion":"v1","kind":"List","items":[
	  {"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"listed"}}]}`))
	if s, err = LoadPaths([]string{p}); err != nil {
		t.Fatal(err)
	}
	if ns := s.DaemonSets[0].Namespace; ns != "default" {
		t.Errorf("List item DaemonSet namespace = %q, want default", ns)
	}
}

// TestCountsAreOnlyHints: a snapshot's counts size its lists, but a hostile
// count (here 900 million pods, 446 GB of pods) must not be allocated: it
// ended the process with "fatal error: out of memory" before the bound.
func TestCountsAreOnlyHints(t *testing.T) {
	data := []byte(snapshotHead + `"coverage":[{"resource":"v1/pods","status":"read","count":900000000}],` +
		`"items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"a"}}]}`)
	s, err := LoadPaths([]string{write(t, t.TempDir(), "huge.json", data)})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 1 {
		t.Fatalf("%d pods, want 1", len(s.Pods))
	}
	r := New(Source{})
	r.Reserve(Pods, 1<<40)
	if got := cap(r.Pods) * int(unsafe.Sizeof(Pod{})); got > maxReserve+int(unsafe.Sizeof(Pod{})) {
		t.Errorf("Reserve allocated %d bytes, above the %d bound", got, maxReserve)
	}
	r.Reserve(Pods, 10)
	if cap(r.Pods) < 10 {
		t.Errorf("a small reservation was not made: cap %d", cap(r.Pods))
	}
}
