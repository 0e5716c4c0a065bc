package library

// Case is one public incident written up as a structured case. The YAML
// field names are the on-disk schema of library/cases/<id>.yaml; the JSON
// names are what `kubegap cases ... -o json` and the MCP tools return.
type Case struct {
	// ID is the file name without .yaml: lowercase, hyphenated, stable.
	ID    string `json:"id" yaml:"-"`
	Title string `json:"title" yaml:"title"`
	// Date is when the incident happened or was first reported (YYYY-MM-DD,
	// or YYYY-MM where the day is not public).
	Date string `json:"date" yaml:"date"`
	// DateKind says what Date is: "incident" (when it happened) or
	// "reported" (when it was first reported, such as an issue's filing
	// day). A date every source of which is a GitHub issue or other tracker
	// entry is a filing date, so validation requires "reported" there (or
	// "incident" with an unverified entry saying why).
	DateKind string `json:"dateKind,omitempty" yaml:"dateKind,omitempty"`
	// Organization is who it happened to, when public.
	Organization string   `json:"organization,omitempty" yaml:"organization,omitempty"`
	Summary      string   `json:"summary" yaml:"summary"`
	Symptoms     []string `json:"symptoms" yaml:"symptoms"`
	Trigger      string   `json:"trigger" yaml:"trigger"`
	RootCause    Cause    `json:"rootCause" yaml:"rootCause"`
	// Components are taxonomy component IDs.
	Components []string `json:"components" yaml:"components"`
	// SymptomCategories are taxonomy symptom IDs.
	SymptomCategories   []string      `json:"symptomCategories" yaml:"symptomCategories"`
	ContributingFactors []Cause       `json:"contributingFactors" yaml:"contributingFactors"`
	Detection           string        `json:"detection" yaml:"detection"`
	Remediation         []string      `json:"remediation" yaml:"remediation"`
	ActionItems         []string      `json:"actionItems,omitempty" yaml:"actionItems,omitempty"`
	Lessons             []string      `json:"lessons" yaml:"lessons"`
	Sources             []Source      `json:"sources" yaml:"sources"`
	Detectable          Detectability `json:"detectable" yaml:"detectable"`
	Unverified          []string      `json:"unverified,omitempty" yaml:"unverified,omitempty"`
	// Inferred names the sections that no listed source states outright,
	// with why they are still written: "lessons: our reading of the
	// postmortem". A section is supported by a source (Source.Supports) or
	// named here; validation allows nothing else.
	Inferred map[string]string `json:"inferred,omitempty" yaml:"inferred,omitempty"`
	// Reviewed is the date (YYYY-MM-DD) of the last claim-by-claim check of
	// the case against its sources.
	Reviewed string `json:"reviewed,omitempty" yaml:"reviewed,omitempty"`
	// Review is the record of each claim-by-claim review by someone who did
	// not write the case, oldest first.
	Review []Review `json:"review,omitempty" yaml:"review,omitempty"`
}

// Review records one claim-by-claim check of a case against its sources by
// a reviewer other than its writer.
type Review struct {
	// By names the reviewer, e.g. "session 21 reviewer".
	By string `json:"by" yaml:"by"`
	// Date is the day of the review (YYYY-MM-DD).
	Date string `json:"date" yaml:"date"`
	// ClaimsChecked counts the claims read against a source; Confirmed
	// those a source states as written; Corrected those changed (fixed,
	// moved to unverified or removed). The rest were left as they were,
	// marked inferred or unverified.
	ClaimsChecked int `json:"claimsChecked" yaml:"claimsChecked"`
	Confirmed     int `json:"confirmed" yaml:"confirmed"`
	Corrected     int `json:"corrected" yaml:"corrected"`
	// Corrections says what each correction was, one entry per corrected
	// claim.
	Corrections []string `json:"corrections,omitempty" yaml:"corrections,omitempty"`
	// Scope names the parts of the case a partial review checked (case
	// fields such as detectable or sources, or "checks" for the check links
	// and fixtures that cite the case); empty for a review of every claim.
	// A partial review does not make a case reviewed (TestUnreviewedCases
	// OnlyShrink) and may postdate reviewed, the day of the last whole one.
	Scope []string `json:"scope,omitempty" yaml:"scope,omitempty"`
}

// Whole reports whether the review checked every claim of the case.
func (r Review) Whole() bool { return len(r.Scope) == 0 }

// WholeReviews is how many of the case's reviews checked every claim.
func (c *Case) WholeReviews() int {
	n := 0
	for _, r := range c.Review {
		if r.Whole() {
			n++
		}
	}
	return n
}

// Cause is a taxonomy category with the case's own explanation.
type Cause struct {
	Category string `json:"category" yaml:"category"`
	Text     string `json:"text" yaml:"text"`
}

// Source is a public report a case's facts come from.
type Source struct {
	URL   string `json:"url" yaml:"url"`
	Title string `json:"title" yaml:"title"`
	// Kind is one of: issue, postmortem, talk, status-page, knowledge-base,
	// blog, mailing-list, news, documentation.
	Kind string `json:"kind" yaml:"kind"`
	// Language is a BCP 47 tag such as en or zh.
	Language string `json:"language" yaml:"language"`
	// Supports names the case sections this source supports: date,
	// organization, summary, symptoms, trigger, rootCause,
	// contributingFactors, detection, remediation, actionItems, lessons.
	Supports []string `json:"supports,omitempty" yaml:"supports,omitempty"`
	// State is a GitHub pull request's state as verified at the source:
	// merged, closed (without merging) or open. Required for /pull/ URLs:
	// a pull request that was never merged is no fix.
	State string `json:"state,omitempty" yaml:"state,omitempty"`
	// MergeCommit is the commit that merged the pull request, when known.
	MergeCommit string `json:"mergeCommit,omitempty" yaml:"mergeCommit,omitempty"`
}

// Detectability says whether the gap behind a case can be seen read-only
// from the Kubernetes API.
type Detectability struct {
	ReadOnly bool `json:"readOnly" yaml:"readOnly"`
	// Signal is what a read-only audit looks at (when ReadOnly).
	Signal string `json:"signal,omitempty" yaml:"signal,omitempty"`
	// Why explains why not (when !ReadOnly).
	Why string `json:"why,omitempty" yaml:"why,omitempty"`
	// NoCheckYet explains why no kubegap check covers a detectable case yet.
	NoCheckYet string `json:"noCheckYet,omitempty" yaml:"noCheckYet,omitempty"`
	// NotEarlier, on a case checks can flag only once it is under way (a
	// detects link and no prevents link), says why nothing read-only shows
	// the gap before it bites, with the source that shows it.
	NotEarlier *NotEarlier `json:"notEarlier,omitempty" yaml:"notEarlier,omitempty"`
}

// NotEarlier is the sourced reason a case cannot be flagged before it
// happens: the gap appears only with the incident (a release published
// that day, a limit reached under load, a race at start-up), as Source,
// one of the case's sources, shows.
type NotEarlier struct {
	Why    string `json:"why" yaml:"why"`
	Source string `json:"source" yaml:"source"`
}
