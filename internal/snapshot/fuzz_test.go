package snapshot

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzLoad feeds arbitrary bytes to the offline loader, as one file: it
// must return a snapshot or one *InputError of one line, never panic or
// hang, whatever the bytes (hostile snapshots included: the streamed path
// runs a reader goroutine beside the decoders).
func FuzzLoad(f *testing.F) {
	s := New(Source{Type: SourceCluster})
	_, add, _ := ListKind(Pods)
	yes := true
	add(s, &corev1.PodList{Items: []corev1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "a", UID: "u",
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "r", UID: "ru", Controller: &yes}}},
		Spec:   corev1.PodSpec{NodeName: "n", Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "c", RestartCount: 3}}},
	}}})
	s.SetCoverage(Pods, StatusRead, "")
	s.Finish()
	var snap bytes.Buffer
	if err := s.Write(&snap); err != nil {
		f.Fatal(err)
	}
	f.Add(snap.Bytes())
	f.Add(snap.Bytes()[:snap.Len()/2])
	f.Add([]byte(nodeYAML + "---\n" + nodeYAML))
	f.Add([]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"}}]}`))
	f.Add([]byte(snapshotHead + `"items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x","name":"y"}}]}`))
	f.Add([]byte(snapshotHead + `"coverage":[{"resource":"v1/pods","status":"read","count":-5}],"items":[]}`))
	// Keys given twice, read last-wins with a warning.
	f.Add([]byte(dupDaemonSet))
	f.Add([]byte("apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n"))
	// A kubectl List, which the differential check below also streams.
	list := kubectlList(f, listObjects()[:2]...)
	f.Add(list)
	f.Add(append([]byte("\xef\xbb\xbf"), list...))
	f.Add(utf16(list, false))
	f.Add(utf16([]byte(nodeYAML), true))
	f.Fuzz(func(t *testing.T, data []byte) {
		var warns []Warning
		got, err := LoadFS(fstest.MapFS{"in.json": {Data: data}}, Source{Type: SourceFiles}, []string{"in.json"},
			WithWarnings(func(w Warning) { warns = append(warns, w) }))
		for _, w := range warns {
			if strings.Contains(w.String(), "\n") {
				t.Fatalf("warning spans lines: %q", w)
			}
		}
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %T is not an *InputError: %v", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		if got == nil {
			t.Fatal("no snapshot and no error")
		}
		// Read item by item from the first byte on, a YAML List must give
		// what the whole read gives, or an error: never another reading.
		streamed, _, err := loadWith(t, "in.json", data, 0)
		if err == nil && written(t, streamed) != written(t, got) {
			t.Fatalf("streamed read differs from the whole read")
		}
	})
}
