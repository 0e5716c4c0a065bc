package check

import "strings"

// ruleNotes is one rule's note while the check runs: its reasons are
// kept apart and joined with "; " when read. Joining each new reason onto
// the text so far copied that text every time, so a check that notes
// each of n objects copied n² bytes: pdb-blocks-drain's 1,000 budgets on
// files (nodes not complete) allocated 60 MB a run for its one note.
type ruleNotes struct {
	RuleNote // Reason unused: reasons holds it
	reasons  []string
	// length is len of the joined reasons.
	length int
}

func newRuleNotes(n RuleNote) *ruleNotes {
	return &ruleNotes{RuleNote: RuleNote{Skipped: n.Skipped, Kind: n.Kind}, reasons: []string{n.Reason}, length: len(n.Reason)}
}

func (r *ruleNotes) add(reason string) {
	r.reasons = append(r.reasons, reason)
	r.length += len("; ") + len(reason)
}

// reason is the joined reasons; it keeps the join, so that reading it
// again costs nothing.
func (r *ruleNotes) reason() string {
	if len(r.reasons) > 1 {
		r.reasons = []string{strings.Join(r.reasons, "; ")}
	}
	return r.reasons[0]
}

// reasonIs reports whether the joined reasons are s. Only a text of the
// same length can be, so the reasons are joined for no other.
func (r *ruleNotes) reasonIs(s string) bool {
	return len(s) == r.length && r.reason() == s
}

func (r *ruleNotes) note() RuleNote {
	n := r.RuleNote
	n.Reason = r.reason()
	return n
}
