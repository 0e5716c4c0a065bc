package snapshot

import (
	"runtime"
	"strings"
	"testing"
)

// BenchmarkAddPodPagesOwnerAnnotations is BenchmarkAddPodPages with every
// pod carrying k3s's two objectset owner annotations, which trimming keeps
// for internal/owner: the heap they add per object, in the worst case of
// every object carrying them (k3s puts them on the objects of its packaged
// manifests only; Rancher on the objects it applies).
func BenchmarkAddPodPagesOwnerAnnotations(b *testing.B) {
	_, add, _ := ListKind(Pods)
	var kept float64
	for b.Loop() {
		b.StopTimer()
		pages := benchPods(10000)
		for _, l := range pages {
			for i := range l.Items {
				// Fresh strings, as a decoder makes them.
				l.Items[i].Annotations[strings.Clone("objectset.rio.cattle.io/owner-gvk")] = strings.Clone("k3s.cattle.io/v1, Kind=Addon")
				l.Items[i].Annotations[strings.Clone("objectset.rio.cattle.io/owner-name")] = strings.Clone("coredns")
			}
		}
		b.StartTimer()
		s := New(Source{})
		s.Reserve(Pods, 10000)
		for i, p := range pages {
			add(s, p)
			pages[i] = nil
		}
		s.Finish()
		b.StopTimer()
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
