package check

import "testing"

// TestDoneNote: a settled note keeps its reason and kind alone, and any
// partial note on the same rule outranks it, in either order.
func TestDoneNote(t *testing.T) {
	var c Context
	c.Done("r", "already there")
	if n := c.Notes()["r"]; n.Kind != Settled || n.Skipped || n.Reason != "already there" {
		t.Errorf("done note %+v", n)
	}
	c.Unknowable("r", "no row")
	if n := c.Notes()["r"]; n.Kind != NeedsKnowledge {
		t.Errorf("settled then partial: kind %q, want %q", n.Kind, NeedsKnowledge)
	}
	var d Context
	d.Unknowable("r", "no row")
	d.Done("r", "already there")
	if n := d.Notes()["r"]; n.Kind != NeedsKnowledge {
		t.Errorf("partial then settled: kind %q, want %q", n.Kind, NeedsKnowledge)
	}
}
