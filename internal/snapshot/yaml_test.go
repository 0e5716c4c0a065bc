package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// loadWith loads one file's bytes with warnings collected, streaming YAML
// Lists past streamAfter bytes.
func loadWith(t *testing.T, name string, data []byte, streamAfter int) (*Snapshot, []Warning, error) {
	t.Helper()
	var warns []Warning
	l := newLoader(Source{Type: SourceFiles}, []LoadOption{WithWarnings(func(w Warning) { warns = append(warns, w) })})
	l.streamAfter = streamAfter
	if err := l.load(name, bytes.NewReader(data)); err != nil {
		return nil, warns, err
	}
	return l.finish(), warns, nil
}

const dupDaemonSet = `apiVersion: apps/v1
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
        imagePullPolicy: IfNotPresent
        image: agent:latest
`

// TestDuplicateKeysLastWins: kubectl and the API server read a key given
// twice in one mapping with its last value (22 real manifests do it, among
// them argo-cd's and Azure's cilium DaemonSet); so does the loader, and it
// says so in one warning naming the file, document, key and lines.
func TestDuplicateKeysLastWins(t *testing.T) {
	in := nodeYAML + "---\n" + dupDaemonSet
	var warns []Warning
	p := write(t, t.TempDir(), "ds.yaml", []byte(in))
	s, err := LoadPaths([]string{p}, WithWarnings(func(w Warning) { warns = append(warns, w) }))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image; got != "agent:latest" {
		t.Errorf("image = %q, want the last value agent:latest", got)
	}
	if len(warns) != 1 {
		t.Fatalf("warnings = %v, want one", warns)
	}
	// The node takes lines 1-4 and "---" line 5: the keys are on lines
	// 16 and 18 of the file.
	want := p + `: document 2: key "spec.template.spec.containers[0].image" is given twice (lines 16 and 18); the last value is used, as kubectl and the API server do`
	if got := warns[0].String(); got != want {
		t.Errorf("warning\n got %s\nwant %s", got, want)
	}

	// A key that overrides one merged in with "<<" is YAML, not a
	// duplicate: read, and no warning.
	merge := `apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    <<: {zone: a, pool: x}
    zone: b
`
	s, warns, err = loadWith(t, "merge.yaml", []byte(merge), streamYAMLAfter)
	if err != nil {
		t.Fatal(err)
	}
	if z := s.Nodes[0].Labels["zone"]; z != "b" || len(warns) != 0 {
		t.Errorf("merge override: zone=%q warnings=%v", z, warns)
	}

	// In a flow mapping both are on one line.
	_, warns, err = loadWith(t, "flow.yaml", []byte("apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n"), streamYAMLAfter)
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0].String(), `key "metadata.name" is given twice (line 3)`) {
		t.Errorf("flow mapping: %v %v", warns, err)
	}
}

// TestDirectorySkipsFilesWithoutObjects: "kubectl apply -f DIR" skips an
// empty or comment-only file; the loader did stop at it with exit 2.
func TestDirectorySkipsFilesWithoutObjects(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", []byte(nodeYAML))
	write(t, dir, "empty.yaml", nil)
	write(t, dir, "comments.yml", []byte("# kustomize placeholder\n---\n# nothing\n"))
	write(t, dir, "blank.json", []byte("\n  \n"))
	s, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Nodes) != 1 {
		t.Errorf("%d nodes, want 1", len(s.Nodes))
	}

	// Nothing at all in the directory is still an error, as is an empty
	// file named on its own (see TestBadInput).
	empty := t.TempDir()
	write(t, empty, "empty.yaml", nil)
	write(t, empty, "c.yaml", []byte("# only\n"))
	_, err = LoadPaths([]string{empty})
	var ie *InputError
	if !errors.As(err, &ie) || ie.File != empty || !strings.Contains(err.Error(), "no file in the directory holds an object") {
		t.Errorf("directory of empty files: %v", err)
	}
	// A malformed file in a directory still stops the load.
	write(t, dir, "bad.yaml", []byte("apiVersion: v1\nkind: [\n"))
	if _, err := LoadPaths([]string{dir}); err == nil || !strings.Contains(err.Error(), "bad.yaml") {
		t.Errorf("malformed file in a directory: %v", err)
	}
}

// kubectlList renders objects as "kubectl get -o yaml" prints a List:
// sigs.k8s.io/yaml over a v1 List, keys sorted, "items:" before "kind:".
func kubectlList(t testing.TB, objs ...any) []byte {
	t.Helper()
	var items []string
	for _, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for i := range lines {
			if i == 0 {
				lines[i] = "- " + lines[i]
			} else if lines[i] != "" {
				lines[i] = "  " + lines[i]
			}
		}
		items = append(items, strings.Join(lines, "\n")+"\n")
	}
	return []byte("apiVersion: v1\nitems:\n" + strings.Join(items, "") + "kind: List\nmetadata:\n  resourceVersion: \"\"\n")
}

func listObjects() []any {
	yes := true
	var objs []any
	for i := range 7 {
		p := fullPod(fmt.Sprintf("web-%d", i))
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		p.Annotations = map[string]string{"kubernetes.io/config.mirror": "line one\nline two\n- not an item\n"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: &yes}}
		objs = append(objs, p)
	}
	objs = append(objs, &appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "agent:latest", Command: []string{"sh", "-c", "echo '- x'\n- y"}}}}}}})
	return objs
}

// written returns the snapshot as Write saves it, for comparing loads.
func written(t *testing.T, s *Snapshot) string {
	t.Helper()
	var b bytes.Buffer
	if err := s.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestStreamedYAMLListReadsAsWhole: a List read item by item gives the
// snapshot that converting it whole gives, in every layout kubectl and
// other YAML writers use.
func TestStreamedYAMLListReadsAsWhole(t *testing.T) {
	list := kubectlList(t, listObjects()...)
	cases := map[string][]byte{
		"kubectl":             list,
		"kind before items":   append([]byte("kind: List\n"), bytes.Replace(list, []byte("kind: List\n"), nil, 1)...),
		"CRLF":                bytes.ReplaceAll(list, []byte("\n"), []byte("\r\n")),
		"comments and blanks": bytes.Replace(list, []byte("items:\n"), []byte("items: # the pods\n# first\n\n"), 1),
		"second document":     append([]byte(nodeYAML+"---\n"), list...),
		"no trailing newline": bytes.TrimSuffix(list, []byte("\n")),
	}
	// A sequence indented under items, as yaml.v3 writers print it.
	var ind bytes.Buffer
	inItems := false
	for _, line := range strings.SplitAfter(string(list), "\n") {
		switch {
		case line == "items:\n":
			inItems = true
		case inItems && line != "" && line[0] != ' ' && line[0] != '-':
			inItems = false
		case inItems:
			line = "  " + line
		}
		ind.WriteString(line)
	}
	cases["indented entries"] = ind.Bytes()
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			whole, _, err := loadWith(t, "l.yaml", data, 1<<30)
			if err != nil {
				t.Fatal(err)
			}
			if len(whole.Pods) != 7 || len(whole.DaemonSets) != 1 {
				t.Fatalf("whole: %d pods, %d daemonsets", len(whole.Pods), len(whole.DaemonSets))
			}
			for _, after := range []int{0, 100, 3000} {
				streamed, _, err := loadWith(t, "l.yaml", data, after)
				if err != nil {
					t.Fatalf("streamed after %d bytes: %v", after, err)
				}
				if written(t, streamed) != written(t, whole) {
					t.Errorf("streamed after %d bytes: the snapshot differs from the whole read", after)
				}
			}
		})
	}
}

// TestStreamedYAMLListErrors: what the line cutter cannot read is an error
// naming the item, never a different reading.
func TestStreamedYAMLListErrors(t *testing.T) {
	list := string(kubectlList(t, listObjects()[:3]...))
	cases := []struct {
		name, data string
		want       []string
	}{
		{"malformed item", strings.Replace(list, "name: web-1", "name: [web-1", 1),
			[]string{"l.yaml: document 1, item 2", "malformed YAML"}},
		{"item without kind", replaceNth(list, "  kind: Pod\n", "", 3),
			[]string{"l.yaml: document 1, item 3", "no kind"}},
		// YAML lets a double-quoted scalar run on at column 0; the piece
		// cut there is unterminated and must fail, not be read otherwise.
		{"quoted scalar over a column-0 dash", strings.Replace(list, "name: web-1\n", "name: \"web-1\n- apiVersion: v1\"\n", 1),
			[]string{"l.yaml: document 1, item 2", "malformed YAML"}},
		{"anchor used across items", strings.Replace(strings.Replace(list, "name: web-0", "name: &n web-0", 1), "name: web-2", "name: *n", 1),
			[]string{"l.yaml: document 1, item 3", "malformed YAML"}},
		{"items of something not a List", strings.Replace(list, "kind: List", "kind: Widget", 1),
			[]string{"l.yaml: document 1", "Widget has a top-level items sequence"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadWith(t, "l.yaml", []byte(tc.data), 0)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestStreamedYAMLListWarnsPerItem: a duplicate key inside a streamed item
// is read last-wins and named by item and file line.
func TestStreamedYAMLListWarnsPerItem(t *testing.T) {
	list := string(kubectlList(t, listObjects()[:3]...))
	i := strings.Index(list, "    name: web-1\n")
	data := list[:i] + "    name: web-x\n" + list[i:]
	line := strings.Count(data[:i], "\n") + 1
	s, warns, err := loadWith(t, "l.yaml", []byte(data), 0)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pods[1].Name != "web-1" {
		t.Errorf("pod %q, want web-1 (the last value)", s.Pods[1].Name)
	}
	want := fmt.Sprintf(`l.yaml: document 1, item 2: key "metadata.name" is given twice (lines %d and %d)`, line, line+1)
	if len(warns) != 1 || !strings.HasPrefix(warns[0].String(), want) {
		t.Errorf("warnings %v, want one starting %q", warns, want)
	}
}

// TestYAMLLineNumbersSurviveStreaming: keys of the head after the items
// are named by their file line.
func TestYAMLLineNumbersSurviveStreaming(t *testing.T) {
	list := string(kubectlList(t, listObjects()[:2]...)) + "kind: List\n"
	n := strings.Count(list, "\n")
	_, warns, err := loadWith(t, "l.yaml", []byte(list), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), fmt.Sprintf(`key "kind" is given twice (lines %d and %d)`, n-3, n)) {
		t.Errorf("warnings %v", warns)
	}
}

// replaceNth replaces the nth (1-based) occurrence of old in s.
func replaceNth(s, old, new string, n int) string {
	at := 0
	for range n - 1 {
		at += strings.Index(s[at:], old) + len(old)
	}
	i := at + strings.Index(s[at:], old)
	return s[:i] + new + s[i+len(old):]
}

// TestStreamingNeedsATopLevelItemsKey: "items:" at column 0 inside a
// quoted scalar that runs on over lines is not the List's items; read
// item by item, the "Node" in that string became an object.
func TestStreamingNeedsATopLevelItemsKey(t *testing.T) {
	data := []byte(`apiVersion: v1
note: "a
items:
- apiVersion: v1
  kind: Node
  metadata: {name: fake}
kind: List"
kind: List
`)
	for _, after := range []int{0, 1 << 30} {
		s, _, err := loadWith(t, "l.yaml", data, after)
		if err != nil {
			t.Fatalf("after %d: %v", after, err)
		}
		if len(s.Nodes) != 0 {
			t.Errorf("after %d: read %d nodes from inside a string", after, len(s.Nodes))
		}
	}
}
