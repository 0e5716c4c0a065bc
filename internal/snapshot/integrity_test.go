package snapshot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// countedSnapshot is a snapshot file as Write writes it, whose coverage
// counts pods objects of v1/pods while its items hold two pods (and one
// node, counted right). version is its formatVersion; 0 leaves it out.
func countedSnapshot(pods, version int) []byte {
	v := ""
	if version != 0 {
		v = fmt.Sprintf(`"formatVersion":%d,`, version)
	}
	return []byte(snapshotHead + v + `"source":{"type":"cluster","serverVersion":"v1.35.4","scope":{}},"coverage":[` +
		`{"resource":"v1/nodes","status":"read","count":1,"complete":true},` +
		fmt.Sprintf(`{"resource":"v1/pods","status":"read","count":%d,"complete":true}],"items":[`, pods) +
		`{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}},` + "\n" +
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"shop"}},` + "\n" +
		`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"shop"}}` + "\n" + `]}` + "\n")
}

// snapshotForms are the ways one snapshot reaches the loader: as Write
// writes it (streamed), reindented JSON, YAML, and YAML past the size at
// which its items are streamed.
func snapshotForms(t *testing.T, data []byte) map[string]func() (*Snapshot, []Warning, error) {
	t.Helper()
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	y, err := yaml.JSONToYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]func() (*Snapshot, []Warning, error){
		"as written": func() (*Snapshot, []Warning, error) { return loadWith(t, "snap.json", data, streamYAMLAfter) },
		"indented": func() (*Snapshot, []Warning, error) {
			return loadWith(t, "snap.json", indented.Bytes(), streamYAMLAfter)
		},
		"yaml":          func() (*Snapshot, []Warning, error) { return loadWith(t, "snap.yaml", y, streamYAMLAfter) },
		"yaml streamed": func() (*Snapshot, []Warning, error) { return loadWith(t, "snap.yaml", y, 1) },
	}
}

// TestSnapshotCountsCheckedAgainstItems is issue 28's defect 8a: a
// snapshot whose coverage counts 3 pods but holds 2 (one cut out after it
// was written) must not be read as every pod there is. Pods are then read
// as objects in the input, not complete, with a warning naming the
// resource and both numbers; the node, counted right, stays complete.
func TestSnapshotCountsCheckedAgainstItems(t *testing.T) {
	for _, recorded := range []int{2, 3, 1} {
		for form, load := range snapshotForms(t, countedSnapshot(recorded, SnapshotFormatVersion)) {
			s, warns, err := load()
			if err != nil {
				t.Fatalf("%d pods recorded, %s: %v", recorded, form, err)
			}
			pods, nodes := s.Status(Pods), s.Status(Nodes)
			if !nodes.Complete || len(s.Pods) != 2 {
				t.Errorf("%d pods recorded, %s: nodes %+v, %d pods", recorded, form, nodes, len(s.Pods))
			}
			if recorded == 2 {
				if !pods.Complete || len(warns) != 0 {
					t.Errorf("%s: counted right, but pods %+v, warnings %v", form, pods, warns)
				}
				continue
			}
			want := fmt.Sprintf("counts %d v1/pods objects but its items hold 2", recorded)
			if pods.Complete || pods.Status != StatusRead || !strings.Contains(pods.Message, want) {
				t.Errorf("%d pods recorded, %s: pods %+v, want read, not complete, %q", recorded, form, pods, want)
			}
			if len(warns) != 1 || !strings.Contains(warns[0].String(), want) || !strings.HasPrefix(warns[0].String(), "snap.") {
				t.Errorf("%d pods recorded, %s: warnings %v, want one naming the file and %q", recorded, form, warns, want)
			}
		}
	}
}

// TestSnapshotFormatVersion: Write records the format; a snapshot of a
// newer (or no valid) format is refused with one line, before its items
// are trusted; one without a version is an older kubegap's and reads as
// ever.
func TestSnapshotFormatVersion(t *testing.T) {
	for _, v := range []int{0, SnapshotFormatVersion} {
		for form, load := range snapshotForms(t, countedSnapshot(2, v)) {
			if s, _, err := load(); err != nil || !s.Status(Pods).Complete {
				t.Errorf("formatVersion %d, %s: %v", v, form, err)
			}
		}
	}
	for _, v := range []int{SnapshotFormatVersion + 1, -1} {
		for form, load := range snapshotForms(t, countedSnapshot(2, v)) {
			_, _, err := load()
			want := fmt.Sprintf("snapshot format version %d is not one this kubegap reads", v)
			if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("formatVersion %d, %s: err %v, want one line saying %q", v, form, err, want)
			}
		}
	}
	// What Write writes carries the version and reads back complete,
	// with nothing to warn about.
	s := New(Source{Type: SourceCluster})
	s.Pods = []Pod{{}}
	s.Pods[0].Own()
	s.Pods[0].Name, s.Pods[0].Namespace = "a", "shop"
	s.SetCoverage(Pods, StatusRead, "")
	s.SetComplete(Pods, nil)
	s.Finish()
	path := filepath.Join(t.TempDir(), "snap.json")
	if err := s.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	var warns []Warning
	back, err := LoadPaths([]string{path}, WithWarnings(func(w Warning) { warns = append(warns, w) }))
	if err != nil || !back.Status(Pods).Complete || len(warns) != 0 {
		t.Fatalf("round trip: %v, pods %+v, warnings %v", err, back.Status(Pods), warns)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil || !bytes.HasPrefix(buf.Bytes(), []byte(snapshotHead+fmt.Sprintf(`"formatVersion":%d,`, SnapshotFormatVersion))) {
		t.Errorf("Write does not lead with the format version: %.120s", buf.String())
	}
}
