package snapshot

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"strings"
	"testing"
)

// jsonPod is a small pod as kubectl prints it; typed leaves out kind and
// apiVersion, as a typed list's items have them.
func jsonPod(i int, typed bool) map[string]any {
	p := map[string]any{
		"metadata": map[string]any{"name": fmt.Sprintf("web-%05d", i), "namespace": "default"},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "web", "image": "nginx:1.27"}}},
	}
	if !typed {
		p["apiVersion"], p["kind"] = "v1", "Pod"
	}
	return p
}

// jsonList prints a List of n pods as kubectl's JSON printer does: keys
// sorted (apiVersion, items, kind, metadata), four-space indented. With
// kindFirst, kind and apiVersion come first, as a server's typed list has
// them; typed items name no kind. extra is merged into the List.
func jsonList(t testing.TB, kind string, n int, kindFirst bool, extra map[string]any) []byte {
	t.Helper()
	typed := kind != "List" && strings.HasSuffix(kind, "List")
	items := make([]any, n)
	for i := range items {
		items[i] = jsonPod(i, typed)
	}
	m := map[string]any{"apiVersion": "v1", "items": items, "kind": kind, "metadata": map[string]any{"resourceVersion": "12"}}
	for k, v := range extra {
		m[k] = v
	}
	if !kindFirst {
		b, err := stdjson.MarshalIndent(m, "", "    ")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var b bytes.Buffer
	b.WriteString(`{"kind":"` + kind + `","apiVersion":"v1"`)
	for _, k := range []string{"metadata", "items"} {
		v, err := stdjson.Marshal(m[k])
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, ",%q:%s", k, v)
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// TestJSONListPerItemLimit: a JSON List larger than the document limit
// (lowered here) loads when each item is within it, whichever comes first
// of its kind and its items, and an item over it is refused with its
// place named.
func TestJSONListPerItemLimit(t *testing.T) {
	defer func(d int64) { documentLimit = d }(documentLimit)
	documentLimit = 64 << 10
	const n = 3000 // about 400 KB of JSON
	for _, tc := range []struct {
		name      string
		kind      string
		kindFirst bool
	}{
		{"kubectl get -o json", "List", false},
		{"typed list, kind first", "PodList", true},
		{"untyped list, kind first", "List", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := jsonList(t, tc.kind, n, tc.kindFirst, nil)
			if int64(len(data)) < 4*documentLimit {
				t.Fatalf("list of %d bytes: not past the limit", len(data))
			}
			s, _, err := loadWith(t, "pods.json", data, streamYAMLAfter)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Pods) != n || s.Pods[n-1].Name != fmt.Sprintf("web-%05d", n-1) {
				t.Errorf("%d pods, want %d", len(s.Pods), n)
			}
			if c := s.Status(Pods); c.Status != StatusRead {
				t.Errorf("pods coverage %+v, want read", c)
			}
			// (Read whole, as before this was read item by item, the List
			// was refused.) One item past the limit is, with its place.
			big := strings.Replace(string(data), `"nginx:1.27"`, `"nginx:1.27`+strings.Repeat("x", int(documentLimit))+`"`, 1)
			_, _, err = loadWith(t, "pods.json", []byte(big), streamYAMLAfter)
			if err == nil || !strings.Contains(err.Error(), "pods.json: document 1, item 1: a document or List item larger than") {
				t.Errorf("one item past the limit: %v, want it refused as item 1", err)
			}
		})
	}
}

// TestJSONListKindAfterItems: a typed list whose kind follows its items
// gives its kind to items that name none while it is read whole; once its
// items are read one by one before the kind is known, they must name their
// own, and an object that is no List with such items is refused.
func TestJSONListKindAfterItems(t *testing.T) {
	small := jsonList(t, "PodList", 20, false, nil)
	s, _, err := loadWith(t, "pods.json", small, streamYAMLAfter)
	if err != nil || len(s.Pods) != 20 {
		t.Fatalf("small typed list, kind last: %v (%d pods)", err, podCount(s))
	}
	_, _, err = loadWith(t, "pods.json", small, 256)
	if err == nil || !strings.Contains(err.Error(), "pods.json: document 1, item 1: object has no kind") {
		t.Errorf("typed list read item by item before its kind: %v, want item 1 refused", err)
	}
	s, _, err = loadWith(t, "pods.json", jsonList(t, "PodList", 20, true, nil), 256)
	if err != nil || len(s.Pods) != 20 {
		t.Errorf("typed list, kind first, read item by item: %v (%d pods)", err, podCount(s))
	}
	_, _, err = loadWith(t, "cm.json", jsonList(t, "ConfigMap", 20, false, nil), 256)
	if err == nil || !strings.Contains(err.Error(), "ConfigMap has a top-level items array larger than") {
		t.Errorf("non-List with a large items array: %v", err)
	}
	// Read whole, as before, an object with a small items array is that
	// object (a ConfigMap's unknown field is dropped).
	cm := []byte(`{"apiVersion":"v1","items":[{"a":1}],"kind":"ConfigMap","metadata":{"name":"c","namespace":"default"}}`)
	if s, _, err := loadWith(t, "cm.json", cm, streamYAMLAfter); err != nil || len(s.ConfigMaps) != 1 {
		t.Errorf("ConfigMap with items: %v", err)
	}
}

func podCount(s *Snapshot) int {
	if s == nil {
		return -1
	}
	return len(s.Pods)
}

// TestJSONListPaged: metadata.continue is read wherever it is in a List
// read item by item, and a paged List is not taken as complete.
func TestJSONListPaged(t *testing.T) {
	for _, kindFirst := range []bool{false, true} {
		data := jsonList(t, "List", 50, kindFirst, map[string]any{"metadata": map[string]any{"continue": "abc"}})
		l := newLoader(Source{Type: SourceFiles}, nil)
		l.streamAfter = 256
		if err := l.load("pods.json", bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		if !l.lastListPaged || l.lastList.Kind != "List" || l.lists != 1 || l.files != 1 || l.snap.Count(Pods) != 50 {
			t.Errorf("kind first %v: paged %v, last list %+v, lists %d, files %d, pods %d",
				kindFirst, l.lastListPaged, l.lastList, l.lists, l.files, l.snap.Count(Pods))
		}
	}
}

// TestJSONSnapshotItemByItem: a snapshot that is not as Write writes it
// (indented by jq or an editor) is read item by item too, its coverage
// kept, and one past the document limit loads.
func TestJSONSnapshotItemByItem(t *testing.T) {
	defer func(d int64) { documentLimit = d }(documentLimit)
	_, add, _ := ListKind(Pods)
	src := New(Source{Type: SourceCluster})
	for _, p := range benchPods(200) {
		add(src, p)
	}
	src.SetCoverage(Pods, StatusRead, "")
	src.Finish()
	var buf, indented bytes.Buffer
	if err := src.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := stdjson.Indent(&indented, buf.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	documentLimit = int64(indented.Len() / 4)
	s, warns, err := loadWith(t, "snap.json", indented.Bytes(), streamYAMLAfter)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Pods) != 200 || s.Source.Type != SourceSnapshot || !s.Status(Pods).Complete || len(warns) != 0 {
		t.Errorf("%d pods, source %s, coverage %+v, warnings %v", len(s.Pods), s.Source.Type, s.Status(Pods), warns)
	}
}
