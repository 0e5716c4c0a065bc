package library

import (
	"fmt"
	"strings"
)

// Facet names: the four ways the library is browsed. They are the "name" of
// each Facet in a Result and the keys the CLI and MCP tools use.
const (
	FacetRootCause = "rootCause"
	FacetComponent = "component"
	FacetSymptom   = "symptom"
	FacetFactor    = "factor"
)

// FacetNames lists the facets in the order pages show them.
func FacetNames() []string {
	return []string{FacetRootCause, FacetComponent, FacetSymptom, FacetFactor}
}

// Taxonomy is library/taxonomy.yaml: the values each facet may take. IDs are
// stable; cases and users refer to them.
type Taxonomy struct {
	RootCauses []Term `json:"rootCauses" yaml:"rootCauses"`
	Components []Term `json:"components" yaml:"components"`
	Symptoms   []Term `json:"symptoms" yaml:"symptoms"`
	Factors    []Term `json:"factors" yaml:"factors"`
}

// Term is one value of a facet.
type Term struct {
	ID          string `json:"id" yaml:"id"`
	Name        string `json:"name" yaml:"name"`
	Description string `json:"description" yaml:"description"`
}

// Terms returns the values of the named facet, or nil for an unknown facet.
func (t *Taxonomy) Terms(facet string) []Term {
	switch facet {
	case FacetRootCause:
		return t.RootCauses
	case FacetComponent:
		return t.Components
	case FacetSymptom:
		return t.Symptoms
	case FacetFactor:
		return t.Factors
	}
	return nil
}

// Term returns the value id of the named facet.
func (t *Taxonomy) Term(facet, id string) (Term, bool) {
	for _, term := range t.Terms(facet) {
		if term.ID == id {
			return term, true
		}
	}
	return Term{}, false
}

// MaxFacetValues is the most values one facet may have. Past about 25 a
// facet stops browsing well (the list no longer fits a sidebar, and values
// start to overlap); merge near-duplicates instead of adding more.
const MaxFacetValues = 25

// validate checks what cases and queries rely on: every facet has values,
// no more than MaxFacetValues, and every value has a well-formed, unique
// ID, a name and a one-line description.
func (t *Taxonomy) validate() []error {
	var errs []error
	for _, facet := range FacetNames() {
		terms := t.Terms(facet)
		if len(terms) == 0 {
			errs = append(errs, fmt.Errorf("taxonomy.yaml: facet %s has no values", facet))
		}
		if len(terms) > MaxFacetValues {
			errs = append(errs, fmt.Errorf("taxonomy.yaml: facet %s has %d values, more than %d: merge near-duplicates", facet, len(terms), MaxFacetValues))
		}
		seen := map[string]bool{}
		for i, term := range terms {
			switch {
			case !validID(term.ID):
				errs = append(errs, fmt.Errorf("taxonomy.yaml: %s value %d: id %q is not lowercase-hyphenated", facet, i+1, term.ID))
			case seen[term.ID]:
				errs = append(errs, fmt.Errorf("taxonomy.yaml: %s value %q is defined twice", facet, term.ID))
			}
			seen[term.ID] = true
			if strings.TrimSpace(term.Name) == "" {
				errs = append(errs, fmt.Errorf("taxonomy.yaml: %s value %q has no name", facet, term.ID))
			}
			switch d := strings.TrimSpace(term.Description); {
			case d == "":
				errs = append(errs, fmt.Errorf("taxonomy.yaml: %s value %q has no description: say in one line what it covers", facet, term.ID))
			case strings.Contains(d, "\n"):
				errs = append(errs, fmt.Errorf("taxonomy.yaml: %s value %q: the description must be one line", facet, term.ID))
			}
		}
	}
	return errs
}

// facetValues returns the IDs a case carries for the named facet.
func facetValues(c *Case, facet string) []string {
	switch facet {
	case FacetRootCause:
		if c.RootCause.Category == "" {
			return nil
		}
		return []string{c.RootCause.Category}
	case FacetComponent:
		return c.Components
	case FacetSymptom:
		return c.SymptomCategories
	case FacetFactor:
		ids := make([]string, 0, len(c.ContributingFactors))
		for _, f := range c.ContributingFactors {
			ids = append(ids, f.Category)
		}
		return ids
	}
	return nil
}

// termIDs lists the IDs of a facet's values, for error messages that name
// the valid ones.
func termIDs(terms []Term) string {
	ids := make([]string, len(terms))
	for i, t := range terms {
		ids[i] = t.ID
	}
	return strings.Join(ids, ", ")
}
