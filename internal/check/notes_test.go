package check

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// joinedNote is how Context.note merged notes when it joined each reason
// at once: the reference the kept-apart reasons must match.
func joinedNote(notes map[string]RuleNote, rule string, n RuleNote) {
	old, seen := notes[rule]
	switch {
	case !seen:
	case old.Skipped && !n.Skipped:
		return
	case old.Skipped == n.Skipped && old.Reason != n.Reason:
		n.Reason = old.Reason + "; " + n.Reason
		if old.Kind == NeedsInput || n.Kind == NeedsInput {
			n.Kind = NeedsInput
		} else if old.Kind == NeedsOptIn {
			n.Kind = NeedsOptIn
		} else if n.Kind == Settled {
			n.Kind = old.Kind
		}
	}
	notes[rule] = n
}

// TestNotesMatchJoinedReasons: random sequences of notes on a few rules,
// with repeated reasons and a reason equal to the text joined so far,
// give what joining each reason at once gave, read at every step.
func TestNotesMatchJoinedReasons(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []NoteKind{NeedsInput, NeedsOptIn, NeedsKnowledge, Settled}
	for seq := range 300 {
		var c Context
		want := map[string]RuleNote{}
		for step := range 12 {
			rule := fmt.Sprint("r", r.IntN(2))
			n := RuleNote{Skipped: r.IntN(4) == 0, Kind: kinds[r.IntN(len(kinds))], Reason: fmt.Sprint("reason ", r.IntN(3))}
			if r.IntN(5) == 0 {
				n.Reason = want[rule].Reason // the text joined so far
			}
			c.note(rule, n)
			joinedNote(want, rule, n)
			if r.IntN(3) == 0 || step == 11 {
				if got := c.Notes(); !reflect.DeepEqual(got, want) {
					t.Fatalf("sequence %d step %d: notes %+v, want %+v", seq, step, got, want)
				}
			}
		}
	}
}

// TestNotesJoinOnce: a thousand distinct reasons on one rule read as one
// text joined by "; ", in order.
func TestNotesJoinOnce(t *testing.T) {
	var c Context
	var parts []string
	for i := range 1000 {
		parts = append(parts, fmt.Sprint("object ", i))
		c.Incomplete("r", "object %d", i)
	}
	if got := c.Notes()["r"].Reason; got != strings.Join(parts, "; ") {
		t.Errorf("reason %.80q…, want the 1,000 reasons joined", got)
	}
	if c.Notes() == nil || (&Context{}).Notes() != nil {
		t.Error("Notes: nil only without notes")
	}
}
