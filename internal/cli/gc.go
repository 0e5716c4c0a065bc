package cli

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// readGCPercent is the GOGC kubegap runs with while it reads a cluster or
// files, unless the user set GOGC. Decoding makes several times as much
// garbage as the snapshot keeps, and the default GOGC of 100 lets the heap
// reach twice what is kept before each collection: at 100k pods, hundreds
// of MB that hold nothing. A live read waits on the network, so collecting
// more often costs little wall time. At 100k pods, 50% left the peak at
// 575-640 MB depending on when the last collection of the read ran, and
// 40% at 545-565 MB for about 15% more CPU (docs/benchmarks.md). It is the
// process's setting, so the commands set it, not the packages they call.
const readGCPercent = 40

// tuneGC sets readGCPercent for the rest of the process unless GOGC is set.
func tuneGC(app *App) {
	if app.Getenv("GOGC") == "" {
		debug.SetGCPercent(readGCPercent)
	}
}

// An offline load's memory is bounded by a memory limit as well as by
// GOGC: the limit is the live heap plus heapSlack of it, and at least
// minHeapSlack over it. GOGC bounds only the heap's objects; on top of
// them the runtime held memory it had freed and not yet returned to the
// OS: at 1M pods the heap peaked at 3.06 GB and RSS at 3.8 GB
// (docs/benchmarks.md, issue 29). Near a memory limit the runtime returns
// freed memory at once. A tighter slack cuts the peak but costs CPU;
// measured on the synth snapshots once the loader packed what it keeps
// (issue 29, sixth round), peak RSS and wall time at 1M and 2M pods:
// 40% 2.37 GB, 40 s and 4.62-4.73 GB, 84-86 s; 30% 2.12 GB, 43 s and
// 4.21 GB, 93 s; 25% 2.03 GB, 45 s and 4.08-4.12 GB, 97-100 s; 20%, as
// here, 2.00 GB, 49 s and 3.89-3.90 GB, 107-112 s (GB here are GiB, as
// in docs/benchmarks.md). 20% is the slack that fits 2M pods in 4 GB on
// two cores within 120 s (issue 29); below about 400k pods (a live heap
// of 640 MB) minHeapSlack is the larger, so smaller inputs are not
// slowed. Before the loader packed its objects, 25% had cost twice the
// CPU: the limit counts every byte the runtime holds, not only live
// objects, so a slack near that overhead makes the runtime collect
// almost all the time.
const (
	heapSlack    = 0.20
	minHeapSlack = 128 << 20
)

// heapLimitPoll is how often the heap limit follows the live heap.
const heapLimitPoll = 50 * time.Millisecond

var heapLimitOnce sync.Once

// limitHeap sets the process's memory limit, for the rest of the process
// (an offline load and the audit after it), to the live heap as of the last
// collection plus heapSlack, and raises it as the live heap grows, unless
// GOMEMLIMIT is set. The limit is soft: a heap that must grow past it does
// (the runtime spends at most about half the CPU collecting before it lets
// the heap grow), and the next collection raises the limit with the live
// heap, so it never stops a load; it trades CPU for peak memory.
func limitHeap(app *App) {
	if app.Getenv("GOMEMLIMIT") != "" {
		return
	}
	heapLimitOnce.Do(func() {
		go func() {
			sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			var last uint64
			for {
				metrics.Read(sample)
				if sample[0].Value.Kind() == metrics.KindUint64 {
					if live := sample[0].Value.Uint64(); live != last {
						last = live
						debug.SetMemoryLimit(heapLimitFor(live))
					}
				}
				time.Sleep(heapLimitPoll)
			}
		}()
	})
}

// heapLimitFor is the memory limit limitHeap sets for a live heap: no
// limit before the first collection has measured it.
func heapLimitFor(live uint64) int64 {
	if live == 0 {
		return math.MaxInt64
	}
	slack := max(uint64(float64(live)*heapSlack), minHeapSlack)
	return int64(min(live+slack, math.MaxInt64/2))
}
