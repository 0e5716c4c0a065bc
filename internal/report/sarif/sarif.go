// Package sarif writes an audit report as SARIF 2.1.0, the format code
// scanning services (GitHub, GitLab, Azure DevOps) read: one rule per check,
// with help text and a link to its first case's page, and one result per
// finding, fingerprinted by the finding's stable ID so that a finding keeps
// its history across runs. Findings from files point at the file and line of
// their object; findings from a live cluster name the object logically.
package sarif

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

// Version and SchemaURI of the SARIF written.
const (
	Version   = "2.1.0"
	SchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	// FingerprintKey names the partial fingerprint: the finding ID, version 1.
	FingerprintKey = "kubegapFindingId/v1"
)

// Rule describes one check for the SARIF rules table.
type Rule struct {
	ID          string
	Title       string
	Description string
	Severity    finding.Severity
	Cases       []finding.CaseLink
}

// Options tune the SARIF output.
type Options struct {
	// Rules describes the checks; a check of the report missing from it
	// gets a rule with its ID and title only.
	Rules []Rule
	// CaseTitle returns a case's title for the help text; nil gives IDs.
	CaseTitle func(id string) string
}

type log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []run  `json:"runs"`
}

type run struct {
	Tool        tool         `json:"tool"`
	Invocations []invocation `json:"invocations"`
	Results     []result     `json:"results"`
	Properties  *runProps    `json:"properties,omitempty"`
}

type runProps struct {
	Source     any `json:"source"`
	Coverage   any `json:"coverage"`
	Suppressed int `json:"suppressedFindings"`
}

type tool struct {
	Driver driver `json:"driver"`
}

type driver struct {
	Name           string          `json:"name"`
	Version        string          `json:"version,omitempty"`
	InformationURI string          `json:"informationUri"`
	Rules          []reportingRule `json:"rules"`
}

type text struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

type reportingRule struct {
	ID                   string         `json:"id"`
	Name                 string         `json:"name,omitempty"`
	ShortDescription     text           `json:"shortDescription"`
	FullDescription      *text          `json:"fullDescription,omitempty"`
	Help                 text           `json:"help"`
	HelpURI              string         `json:"helpUri,omitempty"`
	DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	Properties           map[string]any `json:"properties"`
}

type invocation struct {
	ExecutionSuccessful bool           `json:"executionSuccessful"`
	EndTimeUTC          string         `json:"endTimeUtc,omitempty"`
	Notifications       []notification `json:"toolExecutionNotifications,omitempty"`
}

type notification struct {
	Level      string         `json:"level"`
	Message    text           `json:"message"`
	Descriptor *descriptorRef `json:"descriptor,omitempty"`
}

type descriptorRef struct {
	ID string `json:"id"`
}

type result struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Level               string            `json:"level"`
	Message             text              `json:"message"`
	Locations           []location        `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
	Suppressions        []suppression     `json:"suppressions,omitempty"`
	Properties          map[string]any    `json:"properties"`
}

// suppression is SARIF's record of an accepted result: viewers show it as
// dismissed, with the justification, instead of dropping it.
type suppression struct {
	Kind          string `json:"kind"`
	Status        string `json:"status"`
	Justification string `json:"justification,omitempty"`
}

type location struct {
	PhysicalLocation *physicalLocation `json:"physicalLocation,omitempty"`
	LogicalLocations []logicalLocation `json:"logicalLocations,omitempty"`
}

type physicalLocation struct {
	ArtifactLocation artifactLocation `json:"artifactLocation"`
	Region           *region          `json:"region,omitempty"`
}

type artifactLocation struct {
	URI string `json:"uri"`
}

type region struct {
	StartLine int `json:"startLine"`
}

type logicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// level maps severities onto SARIF's three levels.
func level(s finding.Severity) string {
	switch {
	case s >= finding.High:
		return "error"
	case s == finding.Medium:
		return "warning"
	}
	return "note"
}

// securitySeverity is the CVSS-like score GitHub code scanning sorts by.
func securitySeverity(s finding.Severity) string {
	return [...]string{"1.0", "3.0", "5.5", "8.0", "9.5"}[s]
}

// Write writes rep as a SARIF log with one run.
func Write(w io.Writer, rep *report.Report, opts Options) error {
	rules, index := buildRules(rep, opts)
	r := run{
		Tool: tool{Driver: driver{Name: "kubegap", Version: rep.Tool.Version,
			InformationURI: report.RepositoryURL, Rules: rules}},
		Invocations: []invocation{{ExecutionSuccessful: true}},
		Results:     []result{},
		Properties:  &runProps{Source: rep.Source, Coverage: rep.Coverage, Suppressed: len(rep.Suppressed)},
	}
	if !rep.GeneratedAt.IsZero() {
		r.Invocations[0].EndTimeUTC = rep.GeneratedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	// Unknown is never pass: a check that could not run is a notification
	// the reader sees next to the results.
	for _, c := range rep.Checks {
		if c.Status == report.NotEvaluated || c.Status == report.Partial {
			r.Invocations[0].Notifications = append(r.Invocations[0].Notifications, notification{
				Level: "warning", Message: text{Text: fmt.Sprintf("%s %s: %s", c.ID, c.Status, c.Reason)},
				Descriptor: &descriptorRef{ID: c.ID}})
		}
	}
	if line := report.ConfigLine(rep); line != "" {
		// The config file that shaped this run, named where a reader of
		// the invocation looks: it may skip checks and suppress results.
		r.Invocations[0].Notifications = append(r.Invocations[0].Notifications,
			notification{Level: "note", Message: text{Text: line}})
	}
	for _, warn := range rep.Warnings {
		r.Invocations[0].Notifications = append(r.Invocations[0].Notifications,
			notification{Level: "warning", Message: text{Text: warn}})
	}
	for _, f := range rep.Findings {
		r.Results = append(r.Results, toResult(f, index[f.Check], rep.CaseURL))
	}
	for _, sup := range rep.Suppressed {
		res := toResult(sup.Finding, index[sup.Finding.Check], rep.CaseURL)
		// An annotation on the object is a suppression in the source; a
		// config entry is one kept outside it.
		kind := "external"
		if sup.By == "annotation" {
			kind = "inSource"
		}
		res.Suppressions = []suppression{{Kind: kind, Status: "accepted", Justification: sup.Reason}}
		r.Results = append(r.Results, res)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(log{Schema: SchemaURI, Version: Version, Runs: []run{r}})
}

func buildRules(rep *report.Report, opts Options) ([]reportingRule, map[string]int) {
	known := map[string]Rule{}
	for _, r := range opts.Rules {
		known[r.ID] = r
	}
	index := map[string]int{}
	var out []reportingRule
	add := func(id, title string) {
		if _, ok := index[id]; ok {
			return
		}
		r, ok := known[id]
		if !ok {
			r = Rule{ID: id, Title: title}
		}
		if r.Title == "" {
			r.Title = id
		}
		index[id] = len(out)
		out = append(out, toRule(r, opts.CaseTitle, rep.CaseURL))
	}
	for _, c := range rep.Checks {
		add(c.ID, c.Title)
	}
	for _, f := range rep.Findings {
		add(f.Check, "")
	}
	for _, sup := range rep.Suppressed {
		add(sup.Finding.Check, "")
	}
	return out, index
}

func toRule(r Rule, caseTitle, caseURL func(string) string) reportingRule {
	rr := reportingRule{
		ID: r.ID, Name: ruleName(r.ID),
		ShortDescription:     text{Text: r.Title},
		DefaultConfiguration: map[string]any{"level": level(r.Severity)},
		Properties: map[string]any{"tags": []string{"kubernetes", "reliability"},
			"security-severity": securitySeverity(r.Severity)},
	}
	var plain, md strings.Builder
	if r.Description != "" {
		rr.FullDescription = &text{Text: r.Description}
		plain.WriteString(r.Description)
		md.WriteString(r.Description)
	} else {
		plain.WriteString(r.Title)
		md.WriteString(r.Title)
	}
	if len(r.Cases) > 0 {
		rr.HelpURI = caseURL(r.Cases[0].ID)
		plain.WriteString("\n\nIncidents behind this check:")
		md.WriteString("\n\nIncidents behind this check:\n")
		for _, l := range r.Cases {
			id := l.ID
			title := id
			if caseTitle != nil {
				if t := caseTitle(id); t != "" {
					title = t
				}
			}
			fmt.Fprintf(&plain, "\n- %s %s: %s", l.Relation.Phrase(), title, caseURL(id))
			fmt.Fprintf(&md, "\n- %s [%s](%s)", l.Relation.Phrase(), title, caseURL(id))
		}
	}
	rr.Help = text{Text: plain.String(), Markdown: md.String()}
	return rr
}

// ruleName turns "image-pull-always" into "ImagePullAlways", the
// identifier-like form SARIF viewers show next to the ID.
func ruleName(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func toResult(f finding.Finding, ruleIndex int, caseURL func(string) string) result {
	msg := f.Title
	if f.Message != "" {
		msg += "\n\n" + f.Message
	}
	if f.Owner != nil {
		msg += "\n\nOwner: " + f.Owner.Sentence()
	}
	if f.Remediation != "" {
		msg += "\n\nFix: " + f.Remediation
	}
	for _, l := range f.CaseLinks {
		msg += "\n\n" + capitalized(l.Relation.Phrase()) + " " + l.ID + ": " + caseURL(l.ID)
	}
	objects := make([]string, len(f.Objects))
	for i, o := range f.Objects {
		objects[i] = o.String()
	}
	res := result{
		RuleID: f.Check, RuleIndex: ruleIndex, Level: level(f.Severity),
		Message:             text{Text: msg},
		PartialFingerprints: map[string]string{FingerprintKey: f.ID},
		Properties: map[string]any{"severity": f.Severity.String(), "findingId": f.ID, "objects": objects,
			"evidence": f.Evidence, "cases": f.Cases, "caseLinks": f.CaseLinks},
	}
	if f.Owner != nil {
		res.Properties["owner"] = f.Owner
	}
	if f.Baseline != "" {
		// SARIF's own baselineState is "new", "unchanged", "updated" or
		// "absent"; ours are the first two.
		res.Properties["baselineState"] = f.Baseline
	}
	for _, l := range f.Locations {
		res.Locations = append(res.Locations, location{PhysicalLocation: &physicalLocation{
			ArtifactLocation: artifactLocation{URI: fileURI(l.File)}, Region: lineRegion(l.Line)}})
	}
	if len(res.Locations) == 0 {
		for _, o := range f.Objects {
			res.Locations = append(res.Locations, location{LogicalLocations: []logicalLocation{{
				Name: o.Name, FullyQualifiedName: o.String(), Kind: "resource"}}})
		}
	}
	if res.Locations == nil {
		res.Locations = []location{}
	}
	return res
}

func lineRegion(line int) *region {
	if line <= 0 {
		return nil
	}
	return &region{StartLine: line}
}

// fileURI writes a path as a relative URI reference (forward slashes,
// escaped), as code scanning resolves them against the repository root.
func fileURI(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	p = strings.TrimPrefix(p, "./")
	return (&url.URL{Path: p}).EscapedPath()
}

// capitalized starts a relation's phrase a sentence.
func capitalized(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
