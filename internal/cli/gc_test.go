package cli

import (
	"math"
	"testing"
)

// The heap limit is the live heap plus heapSlack (20%) of it, never less than
// minHeapSlack over it, and no limit at all before a collection measured
// the live heap: a limit of 0 would make the runtime collect without end.
func TestHeapLimitFor(t *testing.T) {
	for _, tc := range []struct {
		live uint64
		want int64
	}{
		{0, math.MaxInt64},
		{100 << 20, 100<<20 + minHeapSlack},
		{2000 << 20, 2400 << 20},
	} {
		if got := heapLimitFor(tc.live); got != tc.want {
			t.Errorf("heapLimitFor(%d MiB) = %d MiB, want %d MiB", tc.live>>20, got>>20, tc.want>>20)
		}
	}
}
