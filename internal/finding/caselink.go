package finding

// Relation says what a check does for an incident it cites.
type Relation string

// The relations of a check to a case.
const (
	// Prevents: run on the cluster as it was before the incident, the
	// check flags the gap that caused it.
	Prevents Relation = "prevents"
	// Detects: the check flags the incident while it is under way, from
	// its symptoms (events, restarts, pending pods).
	Detects Relation = "detects"
	// Related: same mechanism, another trigger the check does not see.
	Related Relation = "related"
)

// Relations lists every relation, strongest first.
func Relations() []Relation { return []Relation{Prevents, Detects, Related} }

// Valid reports whether r is one of Relations.
func (r Relation) Valid() bool { return r == Prevents || r == Detects || r == Related }

// Phrase says in words how a finding relates to the case it cites, e.g.
// "this is the gap behind" + the case's name.
func (r Relation) Phrase() string {
	switch r {
	case Prevents:
		return "this is the gap behind"
	case Detects:
		return "symptoms match"
	case Related:
		return "same mechanism as"
	}
	return "see"
}

// CaseLink is one cited case with how the citing check relates to it.
type CaseLink struct {
	ID       string   `json:"id"`
	Relation Relation `json:"relation"`
}

// RelationTo returns how f's check relates to case id ("" when f carries
// no link for it).
func (f *Finding) RelationTo(id string) Relation {
	for _, l := range f.CaseLinks {
		if l.ID == id {
			return l.Relation
		}
	}
	return ""
}
