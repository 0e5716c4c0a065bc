// Package text renders the audit report for a person at a terminal: the
// full report (WriteText) and one line per finding (WriteSummary). Findings
// and cases are put in display form by internal/present, as the web pages
// and the MCP tools do.
package text

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/internal/textwrap"
)

// Options tune the text report.
type Options struct {
	// Color turns on ANSI colour. Callers set it only for a terminal and
	// never when NO_COLOR is set.
	Color bool
	// CaseTitle returns a case's title for citations; nil prints IDs only.
	CaseTitle func(id string) string
	// MaxObjects caps the objects printed per finding (0: 20). JSON always
	// carries them all.
	MaxObjects int
	// Width wraps every line at this many columns (0: 80). A single word
	// longer than the width (a long field path) is not broken, so that it
	// stays searchable and copyable.
	Width int
	// ExplainCoverage adds, after the coverage block, every incomplete
	// check with each open rule and its reason (--explain-coverage). The
	// JSON report always carries it.
	ExplainCoverage bool
	// Subject names what a finding is about, for the index, which lists
	// findings about the same subject together: an object, or a node pool
	// for findings about nodes of one pool. "" keeps a finding on its own;
	// nil is FirstObject.
	Subject func(f finding.Finding) string
	// Whole leaves -o summary rows and the text index uncut, for stdout that is not a
	// terminal: kubectl never truncates in a pipe, and a script reading
	// the rows wants every title whole.
	Whole bool
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
)

var severityColor = map[finding.Severity]string{
	finding.Critical: "\x1b[1;35m",
	finding.High:     "\x1b[1;31m",
	finding.Medium:   "\x1b[1;33m",
	finding.Low:      "\x1b[1;36m",
	finding.Info:     "\x1b[2m",
}

// WriteText writes the report for a person at a terminal: findings grouped
// by severity, each with its objects, evidence, fix and cited cases.
func Write(w io.Writer, r *report.Report, opts Options) error {
	tw := &textWriter{w: w, opts: opts, caseURL: r.CaseURL}
	if opts.MaxObjects == 0 {
		tw.opts.MaxObjects = 20
	}
	if opts.Width <= 0 {
		tw.opts.Width = 80
	}
	tw.header(r)
	tw.index(r)
	for _, sev := range finding.Severities() {
		var group []finding.Finding
		for _, f := range r.Findings {
			if f.Severity == sev && f.Preflight == "" {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		tw.printf("\n%s\n", tw.color(severityColor[sev], fmt.Sprintf("%s (%d)", strings.ToUpper(sev.String()), len(group))))
		for _, f := range group {
			tw.finding(f)
		}
	}
	tw.preflight(r)
	if len(r.Findings) == 0 {
		tw.printf("\nNo findings.\n")
	}
	tw.coverage(r)
	if tw.opts.ExplainCoverage {
		tw.unknowns(r)
	}
	tw.baseline(r)
	tw.warnings(r)
	tw.summary(r)
	return tw.err
}

// preflight prints the findings about --target-version, fix-before first
// and watch-during second, and ends with the upgrade plan: what to do, in
// order, before and while upgrading.
func (t *textWriter) preflight(r *report.Report) {
	if r.TargetVersion == "" {
		return
	}
	phases := []struct{ phase, heading string }{
		{finding.PreflightBefore, "FIX BEFORE UPGRADING TO " + r.TargetVersion},
		{finding.PreflightDuring, "WATCH DURING THE UPGRADE TO " + r.TargetVersion},
	}
	if cv := r.CurrentVersion; cv != nil {
		how := "stated"
		if cv.Inferred {
			how = "inferred"
		}
		t.printf("\n")
		t.wrapped(fmt.Sprintf("Current version: %s (%s; %s)", cv.Version, how, cv.Basis), "", "  ")
	}
	for _, ph := range phases {
		var group []finding.Finding
		for _, f := range r.Findings {
			if f.Preflight == ph.phase {
				group = append(group, f)
			}
		}
		t.printf("\n%s\n", t.color(ansiBold, fmt.Sprintf("%s (%d)", ph.heading, len(group))))
		if len(group) == 0 {
			t.printf("  nothing found\n")
		}
		for _, f := range group {
			t.findingMarked(f, t.color(severityColor[f.Severity], strings.ToUpper(f.Severity.String()))+" ")
		}
	}
	t.printf("\n%s\n", t.color(ansiBold, "UPGRADE PLAN TO "+r.TargetVersion))
	plan := report.Plan(r)
	for _, st := range plan {
		t.wrapped(fmt.Sprintf("%d. (%s) %s", st.Step, st.Phase, st.Title), "  ", "     ")
		ids := st.FindingID + " [" + st.Check + "]"
		for _, a := range st.Also {
			ids += ", " + a.FindingID + " [" + a.Check + "]"
		}
		t.wrapped("finding "+ids+"; objects: "+report.PlanObjects(st.Objects, 4), "     ", "     ")
		t.wrapped(st.Remediation, "     ", "     ")
	}
	if len(plan) == 0 {
		t.printf("  nothing blocks this upgrade in what kubegap reads (COVERAGE below says what it could not)\n")
	}
}

type textWriter struct {
	w    io.Writer
	opts Options
	err  error
	// caseURL is the report's case page (report.(*Report).CaseURL).
	caseURL func(string) string
	// sevWidth is the index's severity column width.
	sevWidth int
}

func (t *textWriter) printf(format string, args ...any) {
	if t.err == nil {
		_, t.err = fmt.Fprintf(t.w, format, args...)
	}
}

func (t *textWriter) color(code, s string) string {
	if !t.opts.Color {
		return s
	}
	return code + s + ansiReset
}

// header states what was read, the scope and the counts before any
// finding, in at most six lines: the findings come next, and what could
// not be looked at is summed up after them (coverage).
func (t *textWriter) header(r *report.Report) {
	t.wrapped(t.color(ansiBold, "kubegap audit of")+" "+report.SourceText(r.Source)+", "+report.ScopeLine(r), "", "  ")
	for _, note := range snapshot.CompletenessNotes(r.Source) { // cluster-info dump, --complete
		t.wrapped(note, "", "  ")
	}
	t.wrapped(report.CheckCounts(r), "", "  ")
	t.wrapped(report.FindingCounts(r), "", "  ")
	if line := readLine(r); line != "" {
		t.wrapped(t.color(ansiDim, line), "", "  ")
	}
}

// readLine is the header's one line about input: how many resource types
// were read, how many the checks needed and did not get whole, and how
// many warnings wait at the end.
func readLine(r *report.Report) string {
	read := 0
	for _, c := range r.Coverage {
		if c.Status == snapshot.StatusRead {
			read++
		}
	}
	parts := []string{"read " + report.Plural(read, "resource type", "resource types")}
	cov := report.Coverage(r)
	if n := len(cov.Resources); n > 0 {
		parts = append(parts, fmt.Sprintf("%s the checks need %s not whole (COVERAGE, after the findings)", report.Plural(n, "resource", "resources"), isAre(n)))
	} else if !cov.Empty() {
		parts = append(parts, "some checks incomplete (COVERAGE, after the findings)")
	}
	if n := len(r.Warnings); n > 0 {
		parts = append(parts, report.Plural(n, "warning", "warnings")+" at the end")
	}
	// What a config file changed (never silently): on this line, so that
	// the header keeps its six lines.
	if c := report.ConfigLine(r); c != "" {
		parts = append(parts, c)
	}
	return strings.Join(parts, "; ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// coverage prints what could not be looked at, in proportion: one line
// per resource the checks needed and did not get whole, one sentence for a
// namespace scope, the checks waiting on an opt-in source or on knowledge
// kubegap lacks, and the command that completes the rest.
func (t *textWriter) coverage(r *report.Report) {
	cov := report.Coverage(r)
	if cov.Empty() {
		return
	}
	t.printf("\n")
	t.wrapped(t.color(ansiBold, "COVERAGE (unknown, never a pass)"), "", "  ")
	lines, folds := cov.Folded()
	for _, l := range lines {
		t.wrapped(l.Text(), "  ", "      ")
	}
	for _, f := range folds {
		t.wrapped(f.Text(), "  ", "      ")
	}
	if cov.Scope != "" {
		t.wrapped(cov.Scope, "  ", "  ")
	}
	if len(cov.NotRequested) > 0 {
		t.wrapped("not requested (an opt-in source such as --inspect-images, which contacts registries): "+strings.Join(cov.NotRequested, ", "), "  ", "      ")
	}
	if len(cov.UnknownToKubegap) > 0 {
		t.wrapped("unknown to kubegap (facts it holds no source for): "+strings.Join(cov.UnknownToKubegap, ", "), "  ", "      ")
	}
	if len(cov.Other) > 0 {
		t.wrapped("incomplete for other reasons (--explain-coverage says why): "+strings.Join(cov.Other, ", "), "  ", "      ")
	}
	for _, fix := range cov.Fixes {
		t.wrapped("to complete: "+fix.String(), "  ", "      ")
	}
	if !t.opts.ExplainCoverage {
		t.wrapped(t.color(ansiDim, "each check's rules and reasons: --explain-coverage, or -o json"), "  ", "  ")
	}
}

// baseline lists, against a --baseline report, the findings resolved
// since (their check looked again and found nothing) and those it did not
// look at again, which are not resolved.
func (t *textWriter) baseline(r *report.Report) {
	b := r.Baseline
	if b == nil {
		return
	}
	if len(b.Resolved) > 0 {
		t.printf("\n%s\n", t.color(ansiBold, fmt.Sprintf("RESOLVED SINCE %s (%d)", b.File, len(b.Resolved))))
		for _, f := range b.Resolved {
			t.wrapped(t.color(ansiDim, "["+f.Check+"]")+" "+f.Title, "  ", "    ")
		}
	}
	if len(b.NotRechecked) > 0 {
		t.printf("\n%s\n", t.color(ansiBold, fmt.Sprintf("NOT RE-CHECKED (%d): in %s, not looked at again this time, so not resolved", len(b.NotRechecked), b.File)))
		for _, n := range b.NotRechecked {
			t.wrapped(t.color(ansiDim, "["+n.Finding.Check+"]")+" "+n.Finding.Title+" ("+n.Why+")", "  ", "    ")
		}
	}
}

func (t *textWriter) warnings(r *report.Report) {
	if len(r.Warnings) == 0 {
		return
	}
	t.printf("\n%s\n", t.color(ansiBold, "WARNINGS"))
	for _, w := range r.Warnings {
		t.wrapped(w, "  ", "    ")
	}
}

// wrapped prints text wrapped at the width: first after the first-line
// prefix, the rest after indent.
func (t *textWriter) wrapped(text, first, indent string) {
	for i, line := range textwrap.Wrap(text, t.opts.Width-len(indent)) {
		if i == 0 {
			t.printf("%s%s\n", first, line)
		} else {
			t.printf("%s%s\n", indent, line)
		}
	}
}

func (t *textWriter) finding(raw finding.Finding) { t.findingMarked(raw, "") }

// findingMarked prints a finding whose title line starts with mark (the
// severity, where findings are not grouped by it).
func (t *textWriter) findingMarked(raw finding.Finding, mark string) {
	// The display form (object names, case titles) is the presenter's,
	// as on the web pages and in the MCP tools.
	f := present.NewFinding(&raw, t.opts.CaseTitle)
	if f.Baseline == "new" {
		mark += "(new) "
	}
	t.printf("\n")
	title := mark + t.color(ansiDim, "["+f.Check+"]") + " " + t.color(ansiBold, f.Title)
	if raw.ID != "" {
		// The ID --baseline and suppressions key on, dimmed: there to
		// copy, not to read.
		title += " " + t.color(ansiDim, raw.ID)
	}
	t.wrapped(title, "  ", "    ")
	t.wrapped(f.Message, "    ", "    ")
	if len(f.Names) > 0 {
		names := f.Names
		if len(raw.Locations) > 0 && len(names) == len(raw.Objects) {
			// Where the input files define each object, beside its name.
			names = slices.Clone(names)
			for i, o := range raw.Objects {
				if at := report.Where(raw, o); at != "" {
					names[i] += "  " + t.color(ansiDim, at)
				}
			}
		}
		if len(names) > t.opts.MaxObjects {
			names = append(names[:t.opts.MaxObjects:t.opts.MaxObjects],
				fmt.Sprintf("and %d more (-o json lists all)", len(f.Names)-t.opts.MaxObjects))
		}
		t.printf("    objects:  %s\n", strings.Join(names, "\n              "))
	}
	for i, e := range f.Evidence {
		label := "evidence: "
		if i > 0 {
			label = "          "
		}
		t.wrapped(e, "    "+label, "                ")
	}
	if raw.Owner != nil {
		t.wrapped(raw.Owner.Sentence(), "    owner:    ", "              ")
	}
	t.wrapped(f.Remediation, "    fix:      ", "              ")
	for i, c := range f.CaseRefs {
		label := "cases:   "
		if i > 0 {
			label = "         "
		}
		t.wrapped(c.ID+" — "+c.Phrase(), "    "+label+" ", "              ")
	}
	if len(f.Cases) > 0 {
		for _, line := range textwrap.Wrap("read: kubegap cases show "+f.Cases[0]+" or "+t.caseURL(f.Cases[0]), t.opts.Width-6) {
			t.printf("    %s\n", t.color(ansiDim, line))
		}
	}
}

// unknowns is --explain-coverage: every check not evaluated or partial,
// its open rules with their reasons, and what would complete each input.
func (t *textWriter) unknowns(r *report.Report) {
	first := true
	for _, c := range r.Checks {
		var open []report.RuleResult
		for _, rr := range c.Rules {
			if rr.Status != report.RuleEvaluated {
				open = append(open, rr)
			}
		}
		if c.Status != report.NotEvaluated && c.Status != report.Partial && len(open) == 0 {
			continue
		}
		if first {
			t.printf("\n%s\n", t.color(ansiBold, "COULD NOT LOOK, RULE BY RULE (unknown, never a pass)"))
			first = false
		}
		state := string(c.Status)
		if c.Status == report.Fail {
			state = "findings below, but incomplete"
		}
		t.printf("  %s: %s\n", c.ID, state)
		if len(open) == 0 {
			for _, line := range textwrap.Wrap(c.Reason, t.opts.Width-6) {
				t.printf("      %s\n", line)
			}
		}
		for _, rr := range open {
			label := rr.ID
			if rr.ID == c.ID {
				label = "rule"
			}
			state := string(rr.Status)
			switch rr.Category {
			case report.CategoryOptIn:
				state += ", not requested"
			case report.CategoryKnowledge:
				state += ", unknown to kubegap"
			}
			for i, line := range textwrap.Wrap(fmt.Sprintf("%s %s: %s", label, state, rr.Reason), t.opts.Width-6) {
				indent := "  "
				if i > 0 {
					indent = "    "
				}
				t.printf("  %s%s\n", indent, line)
			}
		}
	}
	missing := report.Missing(r)
	if len(missing) == 0 {
		return
	}
	t.printf("\n%s\n", t.color(ansiBold, "EACH INPUT AND ITS FIX"))
	var dump []string
	for _, m := range missing {
		if m.Status == snapshot.StatusRead && !m.Complete || m.Status == snapshot.StatusNotInInput {
			dump = append(dump, m.Resource)
			continue
		}
		t.printf("  %s (%s)\n", m.Resource, describeCoverage(m))
		for _, line := range textwrap.Wrap(m.Fix, t.opts.Width-6) {
			t.printf("      %s\n", line)
		}
	}
	if len(dump) > 0 {
		msg := fmt.Sprintf("Files cannot show that an object does not exist. Dump %s whole with kubectl: "+
			"'kubegap recipe' prints the commands (one file per resource, which the audit then trusts as complete), "+
			"or audit the cluster live, or a 'kubegap snapshot' of it.", report.Plural(len(dump), "resource", "resources"))
		for _, line := range textwrap.Wrap(msg, t.opts.Width-4) {
			t.printf("  %s\n", line)
		}
	}
}

func describeCoverage(m report.MissingInput) string {
	if m.Status == snapshot.StatusRead {
		if m.Complete {
			return "read in part of the cluster only"
		}
		return "some objects in the input, not known to be all"
	}
	return string(m.Status)
}

func (t *textWriter) summary(r *report.Report) {
	t.printf("\n")
	t.wrapped(report.FindingCounts(r), "", "  ")
	if run := report.RunLine(r); run != "" { // which kubegap wrote this, and when
		t.wrapped(t.color(ansiDim, "written by "+run), "", "  ")
	}
}

// WriteSummary writes the header, one line per finding (severity, a NEW
// mark against a baseline, ID, check, title) cut to the width, the
// coverage block and the findings resolved since the baseline: the view
// for a quick look or a CI log.
func WriteSummary(w io.Writer, r *report.Report, opts Options) error {
	tw := &textWriter{w: w, opts: opts, caseURL: r.CaseURL}
	if tw.opts.Width <= 0 {
		tw.opts.Width = 80
	}
	tw.header(r)
	if len(r.Findings) > 0 {
		tw.printf("\n")
	}
	// The ID and check columns are as wide as the longest ID and check,
	// so that the titles line up however long a check's name is.
	idWidth, checkWidth := 0, 0
	for _, f := range r.Findings {
		idWidth, checkWidth = max(idWidth, len(f.ID)), max(checkWidth, len(f.Check))
	}
	for _, f := range r.Findings {
		mark := ""
		if r.Baseline != nil {
			mark = "    "
			if f.Baseline == "new" {
				mark = "NEW "
			}
		}
		// Titles name the object a finding is about; -o json has them all.
		line := fmt.Sprintf("%-8s %s%-*s %-*s %s", strings.ToUpper(f.Severity.String()), mark, idWidth, f.ID, checkWidth, f.Check, f.Title)
		if !tw.opts.Whole {
			line = cut(line, tw.opts.Width)
		}
		tw.printf("%s\n", tw.color(severityColor[f.Severity], line[:min(8, len(line))])+line[min(8, len(line)):])
	}
	if len(r.Findings) == 0 {
		tw.printf("\nNo findings.\n")
	}
	tw.coverage(r)
	tw.baseline(r)
	tw.warnings(r)
	return tw.err
}

// cut shortens s to width runes, ending in "…" when cut.
func cut(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:width-1]) + "…"
}
