package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/internal/textwrap"
)

// TextOptions tune the text report.
type TextOptions struct {
	// Color turns on ANSI colour. Callers set it only for a terminal and
	// never when NO_COLOR is set.
	Color bool
	// CaseTitle returns a case's title for citations; nil prints IDs only.
	CaseTitle func(id string) string
	// MaxObjects caps the objects printed per finding (0: 20). JSON always
	// carries them all.
	MaxObjects int
	// Width wraps messages and fixes (0: 100 columns). Evidence is never
	// wrapped, so that it stays searchable and copyable.
	Width int
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
func WriteText(w io.Writer, r *Report, opts TextOptions) error {
	tw := &textWriter{w: w, opts: opts}
	if opts.MaxObjects == 0 {
		tw.opts.MaxObjects = 20
	}
	if opts.Width == 0 {
		tw.opts.Width = 100
	}
	tw.header(r)
	tw.unknowns(r)
	for _, sev := range finding.Severities() {
		var group []finding.Finding
		for _, f := range r.Findings {
			if f.Severity == sev {
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
	tw.summary(r)
	return tw.err
}

type textWriter struct {
	w    io.Writer
	opts TextOptions
	err  error
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

func (t *textWriter) header(r *Report) {
	src := string(r.Source.Type)
	switch {
	case r.Source.Context != "":
		src += " " + r.Source.Context
	case len(r.Source.Paths) > 0:
		src += " " + strings.Join(r.Source.Paths, ", ")
	}
	if r.Source.ServerVersion != "" {
		src += " (server " + r.Source.ServerVersion + ")"
	}
	counts := map[Status]int{}
	for _, c := range r.Checks {
		counts[c.Status]++
	}
	t.printf("%s %s\n", t.color(ansiBold, "kubegap audit of"), src)
	t.printf("scope: %s\n", scopeLine(r))
	t.printf("%s: %d failed, %d passed, %d partial, %d not evaluated\n",
		plural(len(r.Checks), "check", "checks"), counts[Fail], counts[Pass], counts[Partial], counts[NotEvaluated])
	var read, other []string
	for _, c := range r.Coverage {
		if c.Status == snapshot.StatusRead {
			read = append(read, c.Resource)
		} else if c.Status != snapshot.StatusNotRead {
			other = append(other, fmt.Sprintf("%s %s", c.Resource, c.Status))
		}
	}
	line := fmt.Sprintf("read %d resource types", len(read))
	if len(other) > 0 {
		line += "; " + strings.Join(other, ", ")
	}
	t.printf("%s\n", t.color(ansiDim, line))
}

func (t *textWriter) finding(f finding.Finding) {
	t.printf("\n  %s %s\n", t.color(ansiDim, "["+f.Check+"]"), t.color(ansiBold, f.Title))
	for _, line := range textwrap.Wrap(f.Message, t.opts.Width-4) {
		t.printf("    %s\n", line)
	}
	if len(f.Objects) > 0 {
		names := make([]string, 0, len(f.Objects))
		for i, o := range f.Objects {
			if i == t.opts.MaxObjects {
				names = append(names, fmt.Sprintf("and %d more (-o json lists all)", len(f.Objects)-i))
				break
			}
			names = append(names, o.String())
		}
		t.printf("    objects:  %s\n", strings.Join(names, "\n              "))
	}
	for i, e := range f.Evidence {
		label := "evidence:"
		if i > 0 {
			label = "         "
		}
		t.printf("    %s %s\n", label, e)
	}
	for i, line := range textwrap.Wrap(f.Remediation, t.opts.Width-14) {
		label := "fix:     "
		if i > 0 {
			label = "         "
		}
		t.printf("    %s %s\n", label, line)
	}
	for i, id := range f.Cases {
		label := "cases:   "
		if i > 0 {
			label = "         "
		}
		title := ""
		if t.opts.CaseTitle != nil {
			if s := t.opts.CaseTitle(id); s != "" {
				title = " — " + s
			}
		}
		t.printf("    %s %s%s\n", label, id, title)
	}
	if len(f.Cases) > 0 {
		t.printf("    %s\n", t.color(ansiDim, "read: kubegap cases show "+f.Cases[0]))
	}
}

// unknowns leads the report with what could not be looked at: checks not
// evaluated or partial, their rules, and what would complete each input.
func (t *textWriter) unknowns(r *Report) {
	first := true
	for _, c := range r.Checks {
		var open []RuleResult
		for _, rr := range c.Rules {
			if rr.Status != RuleEvaluated {
				open = append(open, rr)
			}
		}
		if c.Status != NotEvaluated && c.Status != Partial && len(open) == 0 {
			continue
		}
		if first {
			t.printf("\n%s\n", t.color(ansiBold, "COULD NOT LOOK (unknown, never a pass)"))
			first = false
		}
		state := string(c.Status)
		if c.Status == Fail {
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
			for i, line := range textwrap.Wrap(fmt.Sprintf("%s %s: %s", label, rr.Status, rr.Reason), t.opts.Width-6) {
				indent := "  "
				if i > 0 {
					indent = "    "
				}
				t.printf("  %s%s\n", indent, line)
			}
		}
	}
	missing := Missing(r)
	if len(missing) == 0 {
		return
	}
	t.printf("\n%s\n", t.color(ansiBold, "TO COMPLETE THE AUDIT"))
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
			"or audit the cluster live, or a 'kubegap snapshot' of it.", plural(len(dump), "resource", "resources"))
		for _, line := range textwrap.Wrap(msg, t.opts.Width-4) {
			t.printf("  %s\n", line)
		}
	}
}

func describeCoverage(m MissingInput) string {
	if m.Status == snapshot.StatusRead {
		if m.Complete {
			return "read in part of the cluster only"
		}
		return "some objects in the input, not known to be all"
	}
	return string(m.Status)
}

func (t *textWriter) summary(r *Report) {
	var parts []string
	for _, sev := range finding.Severities() {
		parts = append(parts, fmt.Sprintf("%d %s", r.Summary.Count(sev), sev))
	}
	t.printf("\nFindings: %s\n", strings.Join(parts, " · "))
}
