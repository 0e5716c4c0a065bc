package library

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// Query selects cases. Within one facet the values are alternatives (OR);
// across facets all must hold (AND). The zero Query matches every case.
type Query struct {
	RootCauses []string `json:"rootCauses,omitempty"`
	Components []string `json:"components,omitempty"`
	Symptoms   []string `json:"symptoms,omitempty"`
	Factors    []string `json:"factors,omitempty"`
	// Search is words to look for, case-insensitively; a case matches when
	// every word appears somewhere in its text. Results are then ranked by
	// where the words appear: title, then summary, then the rest.
	Search string `json:"search,omitempty"`
	// Limit is the page size; 0 or less means no limit.
	Limit int `json:"limit,omitempty"`
	// Offset is how many matching cases to skip; it must not be negative.
	Offset int `json:"offset,omitempty"`
}

// Result is one page of matching cases with facet counts over all of them.
type Result struct {
	// Total is how many cases match, across all pages.
	Total  int    `json:"total"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
	Cases  []Case `json:"cases"`
	// Facets count, for every value of every facet, the matching cases
	// that carry it.
	Facets []Facet `json:"facets"`
}

// Facet is one facet's values with their counts under the current filter.
type Facet struct {
	// Name is rootCause, component, symptom or factor.
	Name   string       `json:"name"`
	Values []FacetValue `json:"values"`
}

// FacetValue is one value of a facet and how many matching cases carry it.
type FacetValue struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Count int    `json:"count"`
	// Selected is true when the query filters on this value.
	Selected bool `json:"selected,omitempty"`
}

// selections returns the query's filter values by facet name.
func (q *Query) selections() map[string][]string {
	return map[string][]string{
		FacetRootCause: q.RootCauses,
		FacetComponent: q.Components,
		FacetSymptom:   q.Symptoms,
		FacetFactor:    q.Factors,
	}
}

// Query returns the page of cases q selects. Unknown facet values and a
// negative offset are errors; an offset past the end is an empty page.
func (l *Library) Query(q Query) (Result, error) {
	sel := q.selections()
	for _, facet := range FacetNames() {
		for _, id := range sel[facet] {
			if _, ok := l.taxonomy.Term(facet, id); !ok {
				return Result{}, fmt.Errorf("unknown %s %q (valid: %s)", facet, id, termIDs(l.taxonomy.Terms(facet)))
			}
		}
	}
	if q.Offset < 0 {
		return Result{}, fmt.Errorf("offset %d is negative", q.Offset)
	}
	words := searchWords(q.Search)

	type hit struct {
		c     *Case
		score int
	}
	var hits []hit
	for i := range l.cases {
		c := &l.cases[i]
		if !matchesFacets(c, sel) {
			continue
		}
		score, ok := scoreCase(c, words)
		if !ok {
			continue
		}
		hits = append(hits, hit{c, score})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return newerFirst(hits[i].c, hits[j].c)
	})

	res := Result{Total: len(hits), Offset: q.Offset, Limit: max(q.Limit, 0), Cases: []Case{}}
	end := len(hits)
	if q.Limit > 0 && q.Offset+q.Limit < end {
		end = q.Offset + q.Limit
	}
	for i := q.Offset; i < end; i++ {
		res.Cases = append(res.Cases, *hits[i].c)
	}

	for _, facet := range FacetNames() {
		counts := map[string]int{}
		for _, h := range hits {
			for _, id := range facetValues(h.c, facet) {
				counts[id]++
			}
		}
		f := Facet{Name: facet, Values: []FacetValue{}}
		for _, t := range l.taxonomy.Terms(facet) {
			f.Values = append(f.Values, FacetValue{ID: t.ID, Name: t.Name, Count: counts[t.ID], Selected: contains(sel[facet], t.ID)})
		}
		// Most common first, as a faceted page lists them; the taxonomy's
		// own order breaks ties so output is stable.
		sort.SliceStable(f.Values, func(i, j int) bool { return f.Values[i].Count > f.Values[j].Count })
		res.Facets = append(res.Facets, f)
	}
	return res, nil
}

// matchesFacets applies AND across facets and OR within one.
func matchesFacets(c *Case, sel map[string][]string) bool {
	for facet, want := range sel {
		if len(want) == 0 {
			continue
		}
		found := false
		for _, id := range facetValues(c, facet) {
			if contains(want, id) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Facet returns the facet with the given name from a Result.
func (r *Result) Facet(name string) (Facet, bool) {
	for _, f := range r.Facets {
		if f.Name == name {
			return f, true
		}
	}
	return Facet{}, false
}

// searchWords splits a search into lowercase words, trimming punctuation
// that users type around words but that never helps a match. A hyphen
// separates words too, so that "rate-limit" and "rate limit" find the same
// cases whichever way the text spells it.
func searchWords(s string) []string {
	var words []string
	split := func(r rune) bool { return unicode.IsSpace(r) || r == '-' }
	for _, w := range strings.FieldsFunc(strings.ToLower(s), split) {
		w = strings.Trim(w, `.,;:!?"'()[]{}`)
		if w != "" {
			words = append(words, w)
		}
	}
	return words
}

// Weights of a search word by where it appears. A word in the title says
// more about what a case is than the same word in a remediation step.
const (
	weightTitle   = 8
	weightSummary = 3
	weightBody    = 1
)

// scoreCase reports whether every word appears in c and, if so, its rank
// score. Words match as substrings, so "dns" finds "CoreDNS" and
// "glibc_2.34" finds the error text that names it.
func scoreCase(c *Case, words []string) (int, bool) {
	if len(words) == 0 {
		return 0, true
	}
	title := strings.ToLower(c.ID + " " + c.Title)
	summary := strings.ToLower(c.Organization + " " + c.Summary)
	body := strings.ToLower(caseBody(c))
	score := 0
	for _, w := range words {
		s := 0
		if strings.Contains(title, w) {
			s += weightTitle
		}
		if strings.Contains(summary, w) {
			s += weightSummary
		}
		if strings.Contains(body, w) {
			s += weightBody
		}
		if s == 0 {
			return 0, false
		}
		score += s
	}
	return score, true
}

// caseBody joins the text of every section but title and summary.
func caseBody(c *Case) string {
	var b strings.Builder
	add := func(ss ...string) {
		for _, s := range ss {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	add(c.Symptoms...)
	add(c.Trigger, c.RootCause.Text, c.Detection)
	for _, f := range c.ContributingFactors {
		add(f.Text)
	}
	add(c.Remediation...)
	add(c.ActionItems...)
	add(c.Lessons...)
	add(c.Detectable.Signal, c.Detectable.Why)
	for _, s := range c.Sources {
		add(s.Title)
	}
	return b.String()
}
