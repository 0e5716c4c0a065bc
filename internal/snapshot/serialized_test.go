package snapshot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSerializedBytes: a custom resource read from a dump records the size
// of its compact JSON before trimming drops its status (whatever the
// dump's indentation), a live read's object records its marshalled size,
// and after a save and a load the recorded value is the one kept. An item
// of a snapshot file without the annotation has no size: unknown.
func TestSerializedBytes(t *testing.T) {
	app := map[string]any{
		"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
		"metadata": map[string]any{"name": "big", "namespace": "argocd"},
		"spec":     map[string]any{"destination": map[string]any{"server": "https://kubernetes.default.svc"}},
		"status":   map[string]any{"history": []any{map[string]any{"values": strings.Repeat("x: \"y\"\n", 5000)}}},
	}
	compact, _ := json.Marshal(app)
	indented, _ := json.MarshalIndent(app, "", "    ")
	dir := t.TempDir()
	in := write(t, dir, "app.json", indented)
	s, err := LoadPaths([]string{in})
	if err != nil {
		t.Fatal(err)
	}
	apps := s.CustomObjects(ArgoApplications)
	if len(apps) != 1 {
		t.Fatalf("applications: %d", len(apps))
	}
	if _, kept := apps[0].Object["status"]; kept {
		t.Fatal("status kept: the test would not show the size was taken before trimming")
	}
	if n, ok := SerializedBytes(&apps[0]); !ok || n != int64(len(compact)) {
		t.Errorf("size %d (%v), want the compact JSON's %d", n, ok, len(compact))
	}

	out := filepath.Join(dir, "snap.json")
	if err := s.SaveFile(out); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := SerializedBytes(&back.CustomObjects(ArgoApplications)[0]); !ok || n != int64(len(compact)) {
		t.Errorf("after a save: size %d (%v), want %d", n, ok, len(compact))
	}

	// The same snapshot file with the annotation removed: its item is a
	// trimmed object whose size was never recorded.
	raw, _ := os.ReadFile(out)
	stripped := strings.Replace(string(raw), `"`+AnnotationSerializedBytes+`":"`+strconv.Itoa(len(compact))+`"`, `"x":"y"`, 1)
	if stripped == string(raw) {
		t.Fatal("annotation not found in the saved snapshot")
	}
	old := write(t, dir, "old.json", []byte(stripped))
	back, err = LoadPaths([]string{old})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := SerializedBytes(&back.CustomObjects(ArgoApplications)[0]); ok {
		t.Errorf("a snapshot item without a recorded size reads as %d bytes, want unknown", n)
	}

	// A live read: AddCustom measures the object before trimming it.
	live := New(Source{})
	u := unstructured.Unstructured{Object: app}
	want, _ := u.MarshalJSON()
	live.AddCustom(ArgoApplications, []unstructured.Unstructured{u})
	if n, ok := SerializedBytes(&live.CustomObjects(ArgoApplications)[0]); !ok || n != int64(len(want)) {
		t.Errorf("live read: size %d (%v), want %d", n, ok, len(want))
	}
}

// TestKeptEnvValues: FELIX_IPTABLESBACKEND keeps a backend word (any case)
// and nothing else; other variables stay redacted.
func TestKeptEnvValues(t *testing.T) {
	for _, tc := range []struct{ name, value, want string }{
		{"FELIX_IPTABLESBACKEND", "Auto", "Auto"},
		{"FELIX_IPTABLESBACKEND", "nft", "nft"},
		{"FELIX_IPTABLESBACKEND", "Legacy", "Legacy"},
		{"FELIX_IPTABLESBACKEND", "hunter2", Redacted},
		{"PASSWORD", "Auto", Redacted},
	} {
		if got := keptEnvValue(tc.name, tc.value); got != tc.want {
			t.Errorf("%s=%s kept as %q, want %q", tc.name, tc.value, got, tc.want)
		}
	}
}
