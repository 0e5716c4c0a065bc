package check

import "github.com/kubegap/kubegap/internal/finding"

// Relation says what a check does for an incident it cites: whether, run
// on the cluster as it was, it would have flagged the gap before the
// incident, flagged the incident while it was under way, or only shares
// the mechanism. A finding that says "this gap caused <incident>" must be
// backed by a Prevents link; see TestEveryCaseLinkHasItsFixture.
type Relation = finding.Relation

// The relations, re-exported so check files need only this package.
const (
	RelPrevents = finding.Prevents
	RelDetects  = finding.Detects
	RelRelated  = finding.Related
)

// CaseLink is one check–case citation with its relation.
type CaseLink = finding.CaseLink

// Prevents links cases whose pre-incident state the check flags: run on
// the cluster before the trigger, it names the gap that caused them.
func Prevents(ids ...string) []CaseLink { return links(finding.Prevents, ids) }

// Detects links cases the check flags only once they are under way: their
// symptoms (events, restarts, pods pending) are what it reads.
func Detects(ids ...string) []CaseLink { return links(finding.Detects, ids) }

// Related links cases that share the check's mechanism but had another
// trigger, which the check would not have seen.
func Related(ids ...string) []CaseLink { return links(finding.Related, ids) }

// Cite joins groups of links, e.g. Cite(Prevents(a), Detects(b)).
func Cite(groups ...[]CaseLink) []CaseLink {
	var out []CaseLink
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

func links(r Relation, ids []string) []CaseLink {
	out := make([]CaseLink, len(ids))
	for i, id := range ids {
		out[i] = CaseLink{ID: id, Relation: r}
	}
	return out
}

// CaseIDs returns the IDs of c's cited cases, in order.
func (c Check) CaseIDs() []string {
	ids := make([]string, len(c.Cases))
	for i, l := range c.Cases {
		ids[i] = l.ID
	}
	return ids
}

// Relation returns how c relates to case id, and whether c cites it.
func (c Check) Relation(id string) (Relation, bool) {
	for _, l := range c.Cases {
		if l.ID == id {
			return l.Relation, true
		}
	}
	return "", false
}

// LinkCases fills f.CaseLinks from c's declared links for every case f
// cites, unless the check's Run set them itself (a rule whose relation to
// a case differs from the check's strongest one).
func (c Check) LinkCases(f *finding.Finding) {
	if len(f.CaseLinks) > 0 {
		return
	}
	for _, id := range f.Cases {
		r, ok := c.Relation(id)
		if !ok {
			continue
		}
		f.CaseLinks = append(f.CaseLinks, CaseLink{ID: id, Relation: r})
	}
}

// Graded links ids (a list a check builds from its data tables) with the
// relations given in grades; an id no grade names gets no relation, which
// the registry's tests reject, so a new data row cannot cite a case
// without saying how.
func Graded(ids []string, grades ...[]CaseLink) []CaseLink {
	rel := map[string]Relation{}
	for _, g := range grades {
		for _, l := range g {
			rel[l.ID] = l.Relation
		}
	}
	out := make([]CaseLink, len(ids))
	for i, id := range ids {
		out[i] = CaseLink{ID: id, Relation: rel[id]}
	}
	return out
}
