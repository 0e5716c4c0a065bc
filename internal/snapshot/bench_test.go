package snapshot

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// benchPods returns n pods as a live LIST returns them, in pages of 500.
func benchPods(n int) []*corev1.PodList {
	var pages []*corev1.PodList
	for i := 0; i < n; i += 500 {
		l := &corev1.PodList{}
		for j := i; j < min(n, i+500); j++ {
			p := fullPod(fmt.Sprintf("web-%06d", j))
			p.Spec.NodeName = fmt.Sprintf("node-%04d", j%500)
			l.Items = append(l.Items, p)
		}
		pages = append(pages, l)
	}
	return pages
}

// BenchmarkAddPodPages measures trimming and adding 10k decoded pods, and
// reports the heap they keep per pod.
func BenchmarkAddPodPages(b *testing.B) {
	_, add, _ := ListKind(Pods)
	var kept float64
	for b.Loop() {
		b.StopTimer()
		pages := benchPods(10000)
		b.StartTimer()
		s := New(Source{})
		s.Reserve(Pods, 10000)
		for i, p := range pages {
			add(s, p)
			pages[i] = nil
		}
		s.Finish()
		b.StopTimer()
		// What the snapshot keeps: the heap with it, minus without it.
		var with, without runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&with)
		runtime.KeepAlive(s)
		s = nil
		runtime.GC()
		runtime.ReadMemStats(&without)
		kept = float64(int64(with.HeapAlloc)-int64(without.HeapAlloc)) / 10000
		b.StartTimer()
	}
	b.ReportMetric(kept, "heap-B/pod")
}

// BenchmarkLoadSnapshot measures an offline load of a 10k-pod snapshot file.
func BenchmarkLoadSnapshot(b *testing.B) {
	_, add, _ := ListKind(Pods)
	s := New(Source{Type: SourceCluster})
	for _, p := range benchPods(10000) {
		add(s, p)
	}
	s.SetCoverage(Pods, StatusRead, "")
	s.Finish()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		b.Fatal(err)
	}
	// "streamed" is the file as Write writes it; "document" starts with a
	// space, which sends it through the whole-document path that other
	// JSON files take.
	for _, c := range []struct {
		name   string
		prefix string
	}{{"streamed", ""}, {"document", " "}} {
		b.Run(c.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "snap.json")
			if err := os.WriteFile(path, append([]byte(c.prefix), buf.Bytes()...), 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				got, err := LoadPaths([]string{path})
				if err != nil {
					b.Fatal(err)
				}
				if len(got.Pods) != 10000 {
					b.Fatalf("%d pods", len(got.Pods))
				}
			}
		})
	}
}

// BenchmarkLoadJSONList measures an offline load of a 10k-pod JSON List
// as `kubectl get pods -A -o json` prints it (keys sorted: items before
// kind; four-space indented), and as a typed list with its kind first.
// Run with -benchmem: bytes/op is what reading the List item by item
// spares against holding it whole.
func BenchmarkLoadJSONList(b *testing.B) {
	var items []any
	for _, page := range benchPods(10000) {
		for i := range page.Items {
			p := &page.Items[i]
			p.APIVersion, p.Kind = "v1", "Pod"
			items = append(items, p)
		}
	}
	for _, c := range []struct {
		name string
		data func() ([]byte, error)
	}{
		{"kubectl", func() ([]byte, error) {
			return stdjson.MarshalIndent(map[string]any{"apiVersion": "v1", "items": items, "kind": "List",
				"metadata": map[string]any{"resourceVersion": ""}}, "", "    ")
		}},
		{"kind-first", func() ([]byte, error) {
			return stdjson.Marshal(struct {
				Kind       string `json:"kind"`
				APIVersion string `json:"apiVersion"`
				Items      []any  `json:"items"`
			}{"List", "v1", items})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			data, err := c.data()
			if err != nil {
				b.Fatal(err)
			}
			path := filepath.Join(b.TempDir(), "pods.json")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				got, err := LoadPaths([]string{path})
				if err != nil {
					b.Fatal(err)
				}
				if len(got.Pods) != 10000 {
					b.Fatalf("%d pods", len(got.Pods))
				}
			}
		})
	}
}
