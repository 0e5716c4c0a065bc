package library

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Date kinds: what a case's date is.
const (
	DateKindIncident = "incident"
	DateKindReported = "reported"
)

// Pull request states a source may record.
const (
	PRMerged = "merged"
	PRClosed = "closed"
	PROpen   = "open"
)

var (
	pullURLPattern = regexp.MustCompile(`^https://github\.com/[^/]+/[^/]+/pull/([0-9]+)(?:[/?#].*)?$`)
	shaPattern     = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	// fixWords find a sentence that presents a change as the fix.
	fixWords = regexp.MustCompile(`(?i)\bfix(es|ed)?\b`)
	// notMergedWords hedge such a sentence: the change was proposed, not
	// merged, or is still open.
	notMergedWords = regexp.MustCompile(`(?i)\b(unmerged|not merged|never merged|without merging|closed|proposed|proposes|open|pending|draft|superseded)\b`)
	sentenceEnd    = regexp.MustCompile(`[.;]\s+|\n`)
)

// pullNumber returns the number of the GitHub pull request url points at,
// or "" when url is not a pull request.
func pullNumber(url string) string {
	m := pullURLPattern.FindStringSubmatch(url)
	if m == nil {
		return ""
	}
	return m[1]
}

// factSections returns the text of c's sections that state facts, keyed by
// the section name a source may support.
func factSections(c *Case) map[string][]string {
	factors := make([]string, 0, len(c.ContributingFactors))
	for _, f := range c.ContributingFactors {
		factors = append(factors, f.Text)
	}
	return map[string][]string{
		SectionSummary:             {c.Summary},
		SectionSymptoms:            c.Symptoms,
		SectionTrigger:             {c.Trigger},
		SectionRootCause:           {c.RootCause.Text},
		SectionContributingFactors: factors,
		SectionDetection:           {c.Detection},
		SectionRemediation:         c.Remediation,
		SectionActionItems:         c.ActionItems,
	}
}

// sentencesNaming returns the sentences of texts that name pull request n
// by its number (#n) or its address.
func sentencesNaming(texts []string, n, url string) []string {
	ref := regexp.MustCompile(`#` + n + `\b`)
	var out []string
	for _, t := range texts {
		for _, s := range sentenceEnd.Split(t, -1) {
			if ref.MatchString(s) || strings.Contains(s, url) {
				out = append(out, s)
			}
		}
	}
	return out
}

// checkPullRequests enforces that a GitHub pull request a case cites says
// whether it was merged, and that one which was not is never presented as
// the fix: it may back a remediation only where the remediation says it
// was proposed or not merged. Notes that call a merged pull request
// unmerged (or the reverse) contradict the source entry.
func checkPullRequests(c *Case) []error {
	var errs []error
	facts := factSections(c)
	notes := caseNotes(c)
	for i, s := range c.Sources {
		add := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("sources[%d]: "+format, append([]any{i}, args...)...))
		}
		n := pullNumber(s.URL)
		if n == "" {
			if s.State != "" || s.MergeCommit != "" {
				add("state and mergeCommit are for GitHub pull requests, and %s is not one", s.URL)
			}
			continue
		}
		switch s.State {
		case "":
			add("state is required for a pull request (merged, closed or open, as read at the source): a pull request that was never merged is no fix")
			continue
		case PRMerged, PRClosed, PROpen:
		default:
			add("state %q is not merged, closed or open", s.State)
			continue
		}
		if s.MergeCommit != "" {
			if s.State != PRMerged {
				add("mergeCommit is set but state is %s", s.State)
			} else if !shaPattern.MatchString(s.MergeCommit) {
				add("mergeCommit %q is not a commit hash", s.MergeCommit)
			}
		}
		for _, note := range sentencesNaming(notes, n, s.URL) {
			unmergedNote := regexp.MustCompile(`(?i)\b(unmerged|not merged|never merged|without merging|closed without|closed unmerged)\b`).MatchString(note)
			if s.State == PRMerged && unmergedNote {
				add("a note says #%s was not merged, but the source records state merged: %q", n, strings.TrimSpace(note))
			}
		}
		if s.State == PRMerged {
			continue
		}
		for _, name := range sectionNames {
			for _, sentence := range sentencesNaming(facts[name], n, s.URL) {
				if fixWords.MatchString(sentence) && !notMergedWords.MatchString(sentence) {
					add("%s calls #%s a fix, but the pull request is %s: say it was proposed or not merged, or cite the change that was merged: %q", name, n, s.State, strings.TrimSpace(sentence))
				}
			}
		}
		if contains(s.Supports, SectionRemediation) {
			hedged := false
			for _, sentence := range sentencesNaming(c.Remediation, n, s.URL) {
				if notMergedWords.MatchString(sentence) {
					hedged = true
				}
			}
			if !hedged {
				add("supports remediation, but the pull request is %s: the remediation must name #%s and say it was proposed or not merged", s.State, n)
			}
		}
	}
	return errs
}

// checkDateKind enforces that a date backed only by issue trackers is
// marked as a report date: an issue's date is the day it was filed, which
// may be long after the incident began.
func checkDateKind(c *Case) []error {
	switch c.DateKind {
	case "", DateKindIncident, DateKindReported:
	default:
		return []error{fmt.Errorf("dateKind %q is not %s or %s", c.DateKind, DateKindIncident, DateKindReported)}
	}
	dateSources, issueOnly := 0, true
	for _, s := range c.Sources {
		if contains(s.Supports, SectionDate) {
			dateSources++
			if s.Kind != "issue" {
				issueOnly = false
			}
		}
	}
	if dateSources == 0 || !issueOnly || c.DateKind == DateKindReported {
		return nil
	}
	if c.DateKind == DateKindIncident {
		for _, u := range c.Unverified {
			if strings.Contains(strings.ToLower(u), "date") {
				return nil
			}
		}
		return []error{fmt.Errorf("dateKind is incident but every source of the date is an issue: add an unverified entry saying why the filing date is the incident's")}
	}
	return []error{fmt.Errorf("dateKind is required: every source of the date is an issue, whose date is its filing day; set dateKind: reported (or incident, with an unverified entry saying why)")}
}

// reviewScopes are the parts of a case a partial review may name: the
// case's sections, and "checks", the check links and fixtures citing it.
var reviewScopes = map[string]bool{
	"title": true, "date": true, "organization": true, "summary": true, "symptoms": true, "trigger": true,
	"rootCause": true, "components": true, "symptomCategories": true, "contributingFactors": true,
	"detection": true, "remediation": true, "actionItems": true, "lessons": true, "sources": true,
	"detectable": true, "unverified": true, "inferred": true, "checks": true,
}

// checkReviews enforces the shape of the per-case review record: who
// reviewed, on which day, and counts that add up, with one line per
// correction.
func checkReviews(c *Case) []error {
	var errs []error
	for i, r := range c.Review {
		add := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("review[%d]: "+format, append([]any{i}, args...)...))
		}
		if blank(r.By) {
			add("by is required: who reviewed the case")
		}
		switch {
		case blank(r.Date):
			add("date is required")
		case !validDay(r.Date):
			add("date %q is not YYYY-MM-DD", r.Date)
		case r.Whole() && validDay(c.Reviewed) && r.Date > c.Reviewed:
			add("date %s is after reviewed %s: reviewed is the day of the last check", r.Date, c.Reviewed)
		}
		for _, part := range r.Scope {
			if !reviewScopes[part] {
				add("scope %q is no part of a case: use case fields (%s) or checks", part, strings.Join(slices.Sorted(maps.Keys(reviewScopes)), ", "))
			}
		}
		switch {
		case r.ClaimsChecked <= 0:
			add("claimsChecked must be at least 1")
		case r.Confirmed < 0 || r.Corrected < 0:
			add("confirmed and corrected may not be negative")
		case r.Confirmed+r.Corrected > r.ClaimsChecked:
			add("confirmed (%d) plus corrected (%d) exceed claimsChecked (%d)", r.Confirmed, r.Corrected, r.ClaimsChecked)
		}
		if len(r.Corrections) != r.Corrected {
			add("corrections lists %d entries for %d corrected claims: say what each correction was", len(r.Corrections), r.Corrected)
		}
		for j, t := range r.Corrections {
			if blank(t) {
				add("corrections[%d] is empty", j)
			}
		}
	}
	return errs
}

var (
	// denialWords mark a note that says a claim does not hold or could not
	// be confirmed.
	denialWords = regexp.MustCompile(`(?i)not supported|contradict|refute|not confirmed|could not be confirmed|is wrong|incorrect|not stated|no source`)
	// quotedPhrase finds what such a note quotes: the claim it is about.
	quotedPhrase = regexp.MustCompile(`'([^']{6,})'|"([^"]{6,})"|‘([^’]{6,})’|“([^”]{6,})”`)
	// hedgeWords let a fact section repeat a doubted claim as a report.
	hedgeWords = regexp.MustCompile(`(?i)\b(reported|reportedly|claimed|claims|unverified|not confirmed|likely|probably|our reading|our inference|may|might|retelling|says|said|according to)\b`)
)

// checkNotesAgainstFacts enforces the one part of "a note may not
// contradict a section stated as fact" that text can show: when an
// unverified or inferred note quotes a claim and says it is not supported,
// refuted or unconfirmed, no fact section may state the quoted words
// unhedged. Whether an unquoted note contradicts the text stays a reviewer's
// job.
func checkNotesAgainstFacts(c *Case) []error {
	var errs []error
	facts := factSections(c)
	notes := caseNotes(c)
	for _, note := range notes {
		if !denialWords.MatchString(note) {
			continue
		}
		for _, m := range quotedPhrase.FindAllStringSubmatch(note, -1) {
			phrase := ""
			for _, g := range m[1:] {
				if g != "" {
					phrase = strings.ToLower(g)
				}
			}
			for _, name := range sectionNames {
				for _, text := range facts[name] {
					for _, sentence := range sentenceEnd.Split(text, -1) {
						if strings.Contains(strings.ToLower(sentence), phrase) && !hedgeWords.MatchString(sentence) {
							errs = append(errs, fmt.Errorf("%s states %q as fact, but a note says it is not supported or not confirmed: hedge it, mark it as a report, or remove it", name, phrase))
						}
					}
				}
			}
		}
	}
	return errs
}

// caseNotes are a case's hedges: its unverified notes, then its inferred
// notes in the order of their section names (a map has none of its own,
// and errors should come out the same way every run).
func caseNotes(c *Case) []string {
	notes := slices.Clone(c.Unverified)
	for _, k := range slices.Sorted(maps.Keys(c.Inferred)) {
		notes = append(notes, c.Inferred[k])
	}
	return notes
}
