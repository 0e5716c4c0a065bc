package checks

import (
	"slices"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
)

// benchmarked maps each check ID to the benchmarks that time it at 5,000
// nodes and 100,000 pods. Every benchmark registers its checks through
// benchIDs or benchChecks when the test binary starts, so that
// TestEveryCheckBenchmarked holds issue 14's "every check within 0.5 s at
// that size" for checks added later too.
var benchmarked = map[string][]string{}

// benchIDs registers ids as timed by the benchmark name and returns them.
func benchIDs(name string, ids ...string) []string {
	for _, id := range ids {
		benchmarked[id] = append(benchmarked[id], name)
	}
	return ids
}

// benchChecks registers cs as timed by the benchmark name and returns them.
func benchChecks(name string, cs ...check.Check) []check.Check {
	for _, c := range cs {
		benchIDs(name, c.ID)
	}
	return cs
}

func TestEveryCheckBenchmarked(t *testing.T) {
	for _, c := range All() {
		if len(benchmarked[c.ID]) == 0 {
			t.Errorf("check %s is in no benchmark at 5,000 nodes and 100,000 pods: add it to one (see benchmarked_test.go)", c.ID)
		}
	}
	for id, names := range benchmarked {
		if _, ok := Lookup(id); !ok {
			t.Errorf("benchmarks %v time %s, which is not a registered check", slices.Compact(names), id)
		}
	}
}

// lookupAll returns the registered checks with these IDs, for the
// package-level lists of benchmarks; an unknown ID panics, as it is a
// typo in the list.
func lookupAll(ids ...string) []check.Check {
	out := make([]check.Check, len(ids))
	for i, id := range ids {
		c, ok := Lookup(id)
		if !ok {
			panic("no check " + id)
		}
		out[i] = c
	}
	return out
}
