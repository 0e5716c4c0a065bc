package library

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// SourceKinds are the kinds of public report a case may cite.
var sourceKinds = []string{"issue", "postmortem", "talk", "status-page", "knowledge-base", "blog", "mailing-list", "news", "documentation"}

// SourceKinds returns the valid values of Source.Kind.
func SourceKinds() []string { return append([]string(nil), sourceKinds...) }

var (
	idPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	// languagePattern accepts the BCP 47 tags cases need (en, zh, pt-BR,
	// zh-Hans) without pulling in a full tag parser.
	languagePattern = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)
)

// validID reports whether id is lowercase letters and digits in groups
// joined by single hyphens.
func validID(id string) bool { return idPattern.MatchString(id) }

// validDate accepts YYYY-MM-DD and YYYY-MM, real calendar dates only.
func validDate(s string) bool {
	if _, err := time.Parse("2006-01-02", s); err == nil {
		return true
	}
	_, err := time.Parse("2006-01", s)
	return err == nil
}

// validDay accepts YYYY-MM-DD only: a review happens on a day.
func validDay(s string) bool {
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }

// hasSource reports whether url is the address of one of c's sources.
func hasSource(c *Case, url string) bool {
	for _, s := range c.Sources {
		if s.URL == url && !blank(url) {
			return true
		}
	}
	return false
}

// validateCase returns every rule c breaks, each as a message about a field
// of c; Load prefixes the file name.
func validateCase(c *Case, tax *Taxonomy) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	required := func(field, v string) {
		if blank(v) {
			add("%s is required", field)
		}
	}
	requiredList := func(field string, vs []string) {
		if len(vs) == 0 {
			add("%s needs at least one entry", field)
		}
		for i, v := range vs {
			if blank(v) {
				add("%s[%d] is empty", field, i)
			}
		}
	}

	required("title", c.Title)
	switch {
	case blank(c.Date):
		add("date is required")
	case !validDate(c.Date):
		add("date %q is not YYYY-MM-DD or YYYY-MM", c.Date)
	}
	required("summary", c.Summary)
	requiredList("symptoms", c.Symptoms)
	required("trigger", c.Trigger)
	required("rootCause.text", c.RootCause.Text)
	required("detection", c.Detection)
	requiredList("remediation", c.Remediation)
	requiredList("lessons", c.Lessons)
	for i, a := range c.ActionItems {
		if blank(a) {
			add("actionItems[%d] is empty", i)
		}
	}
	for i, u := range c.Unverified {
		if blank(u) {
			add("unverified[%d] is empty", i)
		}
	}

	// Facet references: each must name a taxonomy value, or facet counts
	// and filters would silently miss the case.
	if blank(c.RootCause.Category) {
		add("rootCause.category is required")
	} else {
		errs = append(errs, checkTerms(tax, FacetRootCause, "rootCause.category", []string{c.RootCause.Category})...)
	}
	if len(c.Components) == 0 {
		add("components needs at least one entry")
	}
	errs = append(errs, checkTerms(tax, FacetComponent, "components", c.Components)...)
	if len(c.SymptomCategories) == 0 {
		add("symptomCategories needs at least one entry")
	}
	errs = append(errs, checkTerms(tax, FacetSymptom, "symptomCategories", c.SymptomCategories)...)
	for i, f := range c.ContributingFactors {
		if blank(f.Category) {
			add("contributingFactors[%d].category is required", i)
		}
		if blank(f.Text) {
			add("contributingFactors[%d].text is required", i)
		}
	}
	var factorIDs []string
	for _, f := range c.ContributingFactors {
		if !blank(f.Category) {
			factorIDs = append(factorIDs, f.Category)
		}
	}
	errs = append(errs, checkTerms(tax, FacetFactor, "contributingFactors", factorIDs)...)

	if len(c.Sources) == 0 {
		add("sources needs at least one entry")
	}
	for i, s := range c.Sources {
		errs = append(errs, checkSource(i, s)...)
	}

	if len(c.ContributingFactors) == 0 {
		// The fourth facet: a case filed under no factor is invisible to
		// anyone browsing the library by what made things worse.
		add("contributingFactors needs at least one entry")
	}
	switch {
	case blank(c.Reviewed):
		add("reviewed is required: the date (YYYY-MM-DD) of the last check of every claim against the sources")
	case !validDay(c.Reviewed):
		add("reviewed %q is not YYYY-MM-DD", c.Reviewed)
	}
	errs = append(errs, checkTraceability(c)...)
	errs = append(errs, checkDateKind(c)...)
	errs = append(errs, checkPullRequests(c)...)
	errs = append(errs, checkReviews(c)...)
	errs = append(errs, checkNotesAgainstFacts(c)...)

	if c.Detectable.ReadOnly && blank(c.Detectable.Signal) {
		add("detectable.signal is required when detectable.readOnly is true: say what a read-only audit looks at")
	}
	if !c.Detectable.ReadOnly && blank(c.Detectable.Why) {
		add("detectable.why is required when detectable.readOnly is false: say why the API cannot show the gap")
	}
	if ne := c.Detectable.NotEarlier; ne != nil {
		switch {
		case !c.Detectable.ReadOnly:
			add("detectable.notEarlier is for a case checks see under way; this one is not detectable read-only (detectable.why says why)")
		case blank(ne.Why):
			add("detectable.notEarlier.why is required: say why nothing read-only shows the gap before the incident")
		case !hasSource(c, ne.Source):
			add("detectable.notEarlier.source %q is not one of the case's sources: the reason must come from a source listed beside it", ne.Source)
		}
	}
	return errs
}

// Section names a source may support or a case may list as inferred: the
// parts of a case that carry claims. Title, facets and detectable are ours
// (a label, a filing, an analysis) and are not traced to a source.
const (
	SectionDate                = "date"
	SectionOrganization        = "organization"
	SectionSummary             = "summary"
	SectionSymptoms            = "symptoms"
	SectionTrigger             = "trigger"
	SectionRootCause           = "rootCause"
	SectionContributingFactors = "contributingFactors"
	SectionDetection           = "detection"
	SectionRemediation         = "remediation"
	SectionActionItems         = "actionItems"
	SectionLessons             = "lessons"
)

var sectionNames = []string{
	SectionDate, SectionOrganization, SectionSummary, SectionSymptoms, SectionTrigger, SectionRootCause,
	SectionContributingFactors, SectionDetection, SectionRemediation, SectionActionItems, SectionLessons,
}

// SectionNames returns the sections a source may support, in case order.
func SectionNames() []string { return append([]string(nil), sectionNames...) }

// presentSections returns the sections c fills in. Required sections are
// always present (their absence is reported elsewhere); optional ones count
// only when written.
func presentSections(c *Case) []string {
	var out []string
	for _, s := range sectionNames {
		switch s {
		case SectionOrganization:
			if blank(c.Organization) {
				continue
			}
		case SectionContributingFactors:
			if len(c.ContributingFactors) == 0 {
				continue
			}
		case SectionActionItems:
			if len(c.ActionItems) == 0 {
				continue
			}
		}
		out = append(out, s)
	}
	return out
}

// checkTraceability enforces that every claim-bearing section of c can be
// traced: some source names it in supports, or inferred names it with the
// reason it is written anyway. It also refuses names that are not sections
// and supports or inferred entries for sections the case does not have,
// which are usually slips.
func checkTraceability(c *Case) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(c.Sources) == 0 {
		return nil // "sources needs at least one entry" says it all
	}
	present := presentSections(c)
	supported := map[string]bool{}
	for i, s := range c.Sources {
		if len(s.Supports) == 0 {
			add("sources[%d]: supports is required: name the sections this source backs (%s)", i, strings.Join(sectionNames, ", "))
		}
		seen := map[string]bool{}
		for _, name := range s.Supports {
			switch {
			case !contains(sectionNames, name):
				add("sources[%d]: supports %q, which is not a section (valid: %s)", i, name, strings.Join(sectionNames, ", "))
			case !contains(present, name):
				add("sources[%d]: supports %s, which the case does not have", i, name)
			case seen[name]:
				add("sources[%d]: supports lists %s twice", i, name)
			}
			seen[name] = true
			supported[name] = true
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Inferred)) {
		switch {
		case !contains(sectionNames, name):
			add("inferred: %q is not a section (valid: %s)", name, strings.Join(sectionNames, ", "))
		case !contains(present, name):
			add("inferred: %s, which the case does not have", name)
		case blank(c.Inferred[name]):
			add("inferred: %s needs the reason it is written without a source", name)
		}
	}
	for _, name := range present {
		if !supported[name] && blank(c.Inferred[name]) {
			if _, listed := c.Inferred[name]; listed {
				continue // reported above as a missing reason
			}
			add("%s is not supported by any source: add it to a source's supports, or to inferred with the reason", name)
		}
	}
	return errs
}

// checkTerms reports values that the facet does not define, naming the
// valid ones, and values listed twice (which would count the case twice).
func checkTerms(tax *Taxonomy, facet, field string, ids []string) []error {
	var errs []error
	seen := map[string]bool{}
	for _, id := range ids {
		if blank(id) {
			errs = append(errs, fmt.Errorf("%s has an empty entry", field))
			continue
		}
		if _, ok := tax.Term(facet, id); !ok {
			errs = append(errs, fmt.Errorf("%s: %q is not a %s in taxonomy.yaml (valid: %s)", field, id, facet, termIDs(tax.Terms(facet))))
		}
		if seen[id] {
			errs = append(errs, fmt.Errorf("%s lists %q twice", field, id))
		}
		seen[id] = true
	}
	return errs
}

// checkSource enforces what makes a source citable: an address a reader can
// open, a title, a kind and the language it is written in.
func checkSource(i int, s Source) []error {
	var errs []error
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("sources[%d]: "+format, append([]any{i}, args...)...))
	}
	if blank(s.URL) {
		add("url is required")
	} else if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("url %q is not an http(s) URL", s.URL)
	}
	if blank(s.Title) {
		add("title is required")
	}
	switch {
	case blank(s.Kind):
		add("kind is required (one of %s)", strings.Join(sourceKinds, ", "))
	case !contains(sourceKinds, s.Kind):
		add("kind %q is not one of %s", s.Kind, strings.Join(sourceKinds, ", "))
	}
	switch {
	case blank(s.Language):
		add("language is required (a BCP 47 tag such as en or zh)")
	case !languagePattern.MatchString(s.Language):
		add("language %q is not a BCP 47 tag such as en or zh", s.Language)
	}
	return errs
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// ValidateCitations checks the links between checks and cases. citations
// maps each check ID to the case IDs it cites. Every check must cite at
// least one case and only cases that exist; every case the API can detect
// must be cited by a check or say in detectable.noCheckYet why none exists.
func ValidateCitations(lib *Library, citations map[string][]string) []error {
	var errs []error
	checkIDs := slices.Sorted(maps.Keys(citations))
	cited := map[string]bool{}
	for _, check := range checkIDs {
		cases := citations[check]
		if len(cases) == 0 {
			errs = append(errs, fmt.Errorf("check %s cites no case: every check needs at least one case from the library", check))
		}
		for _, id := range cases {
			if _, ok := lib.Case(id); !ok {
				errs = append(errs, fmt.Errorf("check %s cites case %q, which is not in the library", check, id))
				continue
			}
			cited[id] = true
		}
	}
	for _, c := range lib.cases {
		if c.Detectable.ReadOnly && !cited[c.ID] && blank(c.Detectable.NoCheckYet) {
			errs = append(errs, fmt.Errorf("%s: detectable.readOnly is true but no check cites case %s; write the check or set detectable.noCheckYet", lib.files[c.ID], c.ID))
		}
	}
	return errs
}
