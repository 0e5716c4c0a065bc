package harness

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Sample is one timed run of a command.
type Sample struct {
	Wall time.Duration
	// MaxRSS is the peak resident set size of the process, in bytes.
	MaxRSS int64
	// Stdout is the size of what the command printed.
	Stdout int64
}

// Measure runs argv with env added to the process's environment, stdout
// counted and discarded, and returns its wall time and peak RSS. An exit
// code outside okCodes is an error carrying the end of stderr.
func Measure(ctx context.Context, env []string, argv []string, okCodes ...int) (Sample, error) {
	if len(okCodes) == 0 {
		okCodes = []int{0}
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	var out countWriter
	var errBuf bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errBuf
	start := time.Now()
	err := cmd.Run()
	s := Sample{Wall: time.Since(start), Stdout: out.n}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			s.MaxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		}
	}
	if cmd.ProcessState == nil || !slices.Contains(okCodes, cmd.ProcessState.ExitCode()) {
		return s, fmt.Errorf("%s: %v; stderr: %s", strings.Join(argv, " "), err, tail(errBuf.String(), 800))
	}
	return s, nil
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// Series is several samples of one command.
type Series struct {
	Name    string
	Samples []Sample
}

// MedianWall is the median wall time (the lower middle for an even count).
func (s Series) MedianWall() time.Duration {
	return median(s.Samples, func(x Sample) int64 { return int64(x.Wall) }, func(v int64) time.Duration { return time.Duration(v) })
}

// MedianRSS is the median peak RSS in bytes.
func (s Series) MedianRSS() int64 {
	return median(s.Samples, func(x Sample) int64 { return x.MaxRSS }, func(v int64) int64 { return v })
}

// MinMaxWall are the fastest and slowest runs.
func (s Series) MinMaxWall() (time.Duration, time.Duration) {
	if len(s.Samples) == 0 {
		return 0, 0
	}
	lo, hi := s.Samples[0].Wall, s.Samples[0].Wall
	for _, x := range s.Samples[1:] {
		lo, hi = min(lo, x.Wall), max(hi, x.Wall)
	}
	return lo, hi
}

func median[T any](xs []Sample, key func(Sample) int64, conv func(int64) T) T {
	if len(xs) == 0 {
		return conv(0)
	}
	v := make([]int64, len(xs))
	for i, x := range xs {
		v[i] = key(x)
	}
	slices.Sort(v)
	return conv(v[(len(v)-1)/2])
}

// Table prints the series as the benchmark's result table, then the ratio
// of the live audit's median to the floor's as the last line.
func Table(series []Series, live, floor string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-34s %5s %10s %10s %10s %12s\n", "command", "runs", "median", "min", "max", "peak RSS")
	var liveWall, floorWall time.Duration
	for _, s := range series {
		lo, hi := s.MinMaxWall()
		fmt.Fprintf(&b, "%-34s %5d %9.2fs %9.2fs %9.2fs %9.0f MB\n", s.Name, len(s.Samples),
			s.MedianWall().Seconds(), lo.Seconds(), hi.Seconds(), float64(s.MedianRSS())/1e6)
		switch s.Name {
		case live:
			liveWall = s.MedianWall()
		case floor:
			floorWall = s.MedianWall()
		}
	}
	ratio := "n/a"
	if floorWall > 0 && liveWall > 0 {
		ratio = fmt.Sprintf("%.2f", liveWall.Seconds()/floorWall.Seconds())
	}
	fmt.Fprintf(&b, "ratio: %s\n", ratio)
	return b.String()
}

// LoadAverage reads /proc/loadavg's first three fields, or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
