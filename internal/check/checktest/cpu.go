package checktest

import (
	"syscall"
	"testing"
)

// CPUPerOp reports the process's CPU time (user + system, every thread:
// the check and the garbage collection it causes) per iteration as
// cpu-ns/op, beside the wall time, which on a shared machine says more of
// the load than of the check: `defer checktest.CPUPerOp(b)()` first in a
// benchmark.
func CPUPerOp(b *testing.B) func() {
	c0 := processCPU(b)
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// processCPU is the process's user + system time so far, in nanoseconds.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
