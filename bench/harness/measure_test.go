package harness

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestSeriesMedians(t *testing.T) {
	cases := []struct {
		name    string
		walls   []time.Duration
		rss     []int64
		medWall time.Duration
		medRSS  int64
	}{
		{"one", []time.Duration{3}, []int64{7}, 3, 7},
		{"odd", []time.Duration{5, 1, 3}, []int64{10, 30, 20}, 3, 20},
		{"even takes the lower middle", []time.Duration{4, 1, 3, 2}, []int64{1, 2, 3, 4}, 2, 2},
		{"empty", nil, nil, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Series
			for i := range c.walls {
				s.Samples = append(s.Samples, Sample{Wall: c.walls[i], MaxRSS: c.rss[i]})
			}
			if got := s.MedianWall(); got != c.medWall {
				t.Errorf("MedianWall = %v, want %v", got, c.medWall)
			}
			if got := s.MedianRSS(); got != c.medRSS {
				t.Errorf("MedianRSS = %v, want %v", got, c.medRSS)
			}
		})
	}
}

func TestTableEndsWithRatio(t *testing.T) {
	series := []Series{
		{Name: "floor", Samples: []Sample{{Wall: 2 * time.Second}, {Wall: 4 * time.Second}, {Wall: 3 * time.Second}}},
		{Name: "live", Samples: []Sample{{Wall: 3 * time.Second}, {Wall: 6 * time.Second}, {Wall: 4500 * time.Millisecond}}},
	}
	out := Table(series, "live", "floor")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if last := lines[len(lines)-1]; last != "ratio: 1.50" {
		t.Errorf("last line = %q, want ratio: 1.50\n%s", last, out)
	}
	if got := Table(series[:1], "live", "floor"); !strings.HasSuffix(got, "ratio: n/a\n") {
		t.Errorf("without a live series the ratio is n/a, got\n%s", got)
	}
}

func TestMeasureReportsRSSAndExitCodes(t *testing.T) {
	ctx := context.Background()
	s, err := Measure(ctx, nil, []string{"sh", "-c", "echo done"})
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxRSS <= 0 || s.Wall <= 0 || s.Stdout != 5 {
		t.Errorf("sample = %+v, want positive RSS and wall, 5 bytes of stdout", s)
	}
	if _, err := Measure(ctx, nil, []string{"sh", "-c", "echo oops >&2; exit 3"}); err == nil || !strings.Contains(err.Error(), "oops") {
		t.Errorf("exit 3 not allowed: err = %v, want one naming stderr", err)
	}
	if _, err := Measure(ctx, nil, []string{"sh", "-c", "exit 1"}, 0, 1); err != nil {
		t.Errorf("exit 1 allowed: %v", err)
	}
}
