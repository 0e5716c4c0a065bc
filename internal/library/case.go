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
}
