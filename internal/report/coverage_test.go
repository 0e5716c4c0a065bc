package report

import (
	"slices"
	"testing"
)

// TestCoverageFolded: in a long list, resources that each leave one check
// incomplete for the same reason share a line; one leaving two checks, or
// a reason with fewer than three such resources, keeps its own line; a
// short list is never folded; nothing is lost.
func TestCoverageFolded(t *testing.T) {
	long := CoverageSummary{Resources: []CoverageLine{
		{Name: "deployments", State: "not in the input", Checks: 9},
		{Name: "roles", State: "not in the input", Checks: 1},
		{Name: "pods", State: "forbidden", Checks: 1},
		{Name: "nodes", State: "forbidden", Checks: 1},
		{Name: "csinodes", State: "not in the input", Checks: 1},
		{Name: "events", State: "not in the input", Checks: 2},
		{Name: "jobs", State: "not in the input", Checks: 1},
	}}
	for _, n := range []string{"a", "b", "c", "d"} {
		long.Resources = append(long.Resources, CoverageLine{Name: n, State: "not in the input", Checks: 3})
	}
	lines, folds := long.Folded()
	var names []string
	for _, l := range lines {
		names = append(names, l.Name)
	}
	if !slices.Equal(names, []string{"deployments", "pods", "nodes", "events", "a", "b", "c", "d"}) {
		t.Errorf("own lines %v", names)
	}
	if len(folds) != 1 || folds[0].State != "not in the input" || !slices.Equal(folds[0].Names, []string{"roles", "csinodes", "jobs"}) {
		t.Fatalf("folds %+v, want roles, csinodes and jobs not in the input", folds)
	}
	if got, want := folds[0].Text(), "3 more resources not in the input, 1 check incomplete each: roles, csinodes, jobs"; got != want {
		t.Errorf("fold text %q, want %q", got, want)
	}

	short := CoverageSummary{Resources: long.Resources[1:5]}
	if lines, folds := short.Folded(); len(lines) != 4 || len(folds) != 0 {
		t.Errorf("a list of 4 folded: %d lines, %+v", len(lines), folds)
	}
}
