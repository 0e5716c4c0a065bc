// Package markdown writes an audit report as Markdown for a pull-request or
// merge-request comment: the scope and counts first, a table of findings,
// then each finding's details folded in a <details> block so that a long
// report stays one screen until opened. The text is CommonMark with GFM
// tables, as GitHub and GitLab render comments.
package markdown

import (
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

// Options tune the Markdown report.
type Options struct {
	// ExplainCoverage adds every incomplete check's open rules and
	// reasons, folded, after the coverage summary (--explain-coverage).
	ExplainCoverage bool
}

// Write writes rep as Markdown.
func Write(w io.Writer, rep *report.Report) error { return WriteWith(w, rep, Options{}) }

// WriteWith writes rep as Markdown: a short header (what was read, the
// scope, the counts), the findings, then what could not be looked at, in
// proportion.
func WriteWith(w io.Writer, rep *report.Report, opts Options) error {
	var b strings.Builder
	b.WriteString("## kubegap audit\n\n")
	fmt.Fprintf(&b, "%s · %s · %s\n\n", esc(sourceText(rep)), esc(rep.Source.Scope.String()), checkCounts(rep))
	fmt.Fprintf(&b, "**%s**\n\n", esc(report.FindingCounts(rep)))
	if line := report.HeaderLine(rep); line != "" { // which kubegap, when, and the config file's effects
		fmt.Fprintf(&b, "<sub>%s</sub>\n\n", esc(line))
	}

	if len(rep.Findings) > 0 {
		b.WriteString("| | Severity | Check | Finding | Objects |\n|---|---|---|---|---|\n")
		for _, f := range rep.Findings {
			mark := ""
			if f.Baseline == "new" {
				mark = "🆕"
			}
			fmt.Fprintf(&b, "| %s | %s | `%s` | %s | %s |\n", mark, f.Severity, f.Check, cell(f.Title), cell(objects(f, 3)))
		}
		b.WriteString("\n")
		for _, f := range rep.Findings {
			details(&b, f, rep.CaseURL)
		}
	} else {
		b.WriteString("No findings.\n\n")
	}
	plan(&b, rep)

	coverage(&b, rep, opts)
	if bl := rep.Baseline; bl != nil {
		if len(bl.Resolved) > 0 {
			fmt.Fprintf(&b, "**Resolved since %s** (%d):\n\n", esc(bl.File), len(bl.Resolved))
			for _, f := range bl.Resolved {
				fmt.Fprintf(&b, "- `%s` %s\n", f.Check, esc(f.Title))
			}
			b.WriteString("\n")
		}
		if len(bl.NotRechecked) > 0 {
			fmt.Fprintf(&b, "**Not re-checked** (%d; in %s, not looked at again this time, so not resolved):\n\n", len(bl.NotRechecked), esc(bl.File))
			for _, n := range bl.NotRechecked {
				fmt.Fprintf(&b, "- `%s` %s (%s)\n", n.Finding.Check, esc(n.Finding.Title), esc(n.Why))
			}
			b.WriteString("\n")
		}
	}
	if len(rep.Suppressed) > 0 {
		b.WriteString("<details>\n<summary>Suppressed findings</summary>\n\n")
		for _, s := range rep.Suppressed {
			fmt.Fprintf(&b, "- `%s` %s: %s (by %s", s.Finding.Check, esc(s.Finding.Title), esc(s.Reason), s.By)
			if s.Expires != "" {
				fmt.Fprintf(&b, ", until %s", s.Expires)
			}
			b.WriteString(")\n")
		}
		b.WriteString("\n</details>\n\n")
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(&b, "> **Warning:** %s\n\n", esc(warn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plan writes, for a preflight, the current version and the upgrade
// plan: one numbered step per finding to fix before or watch during the
// upgrade, with its finding ID, check and objects.
func plan(b *strings.Builder, rep *report.Report) {
	if rep.TargetVersion == "" {
		return
	}
	fmt.Fprintf(b, "### Upgrade plan to %s\n\n", esc(rep.TargetVersion))
	if cv := rep.CurrentVersion; cv != nil {
		how := "stated"
		if cv.Inferred {
			how = "inferred"
		}
		fmt.Fprintf(b, "Current version: **%s** (%s; %s)\n\n", esc(cv.Version), how, esc(cv.Basis))
	}
	steps := report.Plan(rep)
	if len(steps) == 0 {
		b.WriteString("Nothing blocks this upgrade in what kubegap reads (the coverage below says what it could not).\n\n")
		return
	}
	for _, st := range steps {
		ids := fmt.Sprintf("`%s` (`%s`)", st.FindingID, st.Check)
		for _, a := range st.Also {
			ids += fmt.Sprintf(", `%s` (`%s`)", a.FindingID, a.Check)
		}
		fmt.Fprintf(b, "%d. **%s** %s — %s: %s. Objects: %s. Fix: %s\n", st.Step, st.Phase, st.Severity, ids, cell(st.Title),
			cell(report.PlanObjects(st.Objects, 4)), cell(st.Remediation))
	}
	b.WriteString("\n")
}

// coverage writes what could not be looked at: one item per resource the
// checks needed and did not get whole, the scope, and the command that
// completes the audit; the per-rule detail folded, on request.
func coverage(b *strings.Builder, rep *report.Report, opts Options) {
	cov := report.Coverage(rep)
	if cov.Empty() {
		return
	}
	b.WriteString("**Coverage** (what the input does not show is unknown, not a pass):\n\n")
	items := len(cov.Resources) + len(cov.NotRequested) + len(cov.UnknownToKubegap) + len(cov.Other)
	lines, folds := cov.Folded()
	for _, l := range lines {
		fmt.Fprintf(b, "- `%s`: %s — %s incomplete\n", l.Name, esc(l.State), report.Plural(l.Checks, "check", "checks"))
	}
	for _, f := range folds {
		fmt.Fprintf(b, "- %d more resources %s, 1 check incomplete each: %s\n", len(f.Names), esc(f.State), codes(f.Names))
	}
	if len(cov.NotRequested) > 0 {
		fmt.Fprintf(b, "- not requested (an opt-in source such as `--inspect-images`): %s\n", codes(cov.NotRequested))
	}
	if len(cov.UnknownToKubegap) > 0 {
		fmt.Fprintf(b, "- unknown to kubegap (facts it holds no source for): %s\n", codes(cov.UnknownToKubegap))
	}
	if len(cov.Other) > 0 {
		fmt.Fprintf(b, "- incomplete for other reasons: %s\n", codes(cov.Other))
	}
	if items > 0 {
		b.WriteString("\n")
	}
	if cov.Scope != "" {
		b.WriteString(esc(cov.Scope) + "\n\n")
	}
	for _, fix := range cov.Fixes {
		b.WriteString("To complete: ")
		if fix.Command != "" {
			// Commands and RBAC rules kubegap writes hold no backtick.
			fmt.Fprintf(b, "`%s` ", fix.Command)
		}
		b.WriteString(esc(fix.Note) + "\n\n")
	}
	if !opts.ExplainCoverage {
		return
	}
	b.WriteString("<details>\n<summary>Each incomplete check, rule by rule</summary>\n\n")
	for _, c := range rep.Checks {
		var open []string
		for _, rr := range c.Rules {
			if rr.Status != report.RuleEvaluated {
				open = append(open, fmt.Sprintf("  - `%s` %s: %s", rr.ID, rr.Status, esc(rr.Reason)))
			}
		}
		if len(open) == 0 && c.Status != report.NotEvaluated && c.Status != report.Partial {
			continue
		}
		fmt.Fprintf(b, "- `%s` %s", c.ID, c.Status)
		if len(open) == 0 && c.Reason != "" {
			fmt.Fprintf(b, ": %s", esc(c.Reason))
		}
		b.WriteString("\n")
		for _, o := range open {
			b.WriteString(o + "\n")
		}
	}
	b.WriteString("\n</details>\n\n")
}

func codes(ids []string) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "`" + id + "`"
	}
	return strings.Join(out, ", ")
}

func details(b *strings.Builder, f finding.Finding, caseURL func(string) string) {
	fmt.Fprintf(b, "<details>\n<summary><b>%s</b> %s</summary>\n\n",
		html.EscapeString(strings.ToUpper(f.Severity.String())), html.EscapeString(f.Title))
	for _, para := range strings.Split(f.Message, "\n") {
		if strings.TrimSpace(para) != "" {
			b.WriteString(escLineStart(esc(strings.TrimSpace(para))) + "\n\n")
		}
	}
	fmt.Fprintf(b, "- **Check:** `%s` · **ID:** `%s`\n", f.Check, f.ID)
	if len(f.Objects) > 0 {
		fmt.Fprintf(b, "- **Objects:** %s\n", esc(objects(f, 20)))
	}
	if f.Owner != nil {
		fmt.Fprintf(b, "- **Owner:** %s\n", esc(f.Owner.Sentence()))
	}
	if f.Remediation != "" {
		fmt.Fprintf(b, "- **Fix:** %s\n", esc(f.Remediation))
	}
	if len(f.Cases) > 0 {
		var links []string
		for _, c := range f.Cases {
			link := fmt.Sprintf("[%s](%s)", esc(c), caseURL(c))
			if r := f.RelationTo(c); r != "" {
				link = r.Phrase() + " " + link
			}
			links = append(links, link)
		}
		fmt.Fprintf(b, "- **Cases:** %s\n", strings.Join(links, ", "))
	}
	if len(f.Evidence) > 0 {
		fence := codeFence(f.Evidence)
		fmt.Fprintf(b, "\n%s\n%s\n%s\n", fence, strings.Join(f.Evidence, "\n"), fence)
	}
	b.WriteString("\n</details>\n\n")
}

func sourceText(rep *report.Report) string {
	s := string(rep.Source.Type)
	switch {
	case rep.Source.Context != "":
		s += " " + rep.Source.Context
	case len(rep.Source.Paths) > 0:
		s += " " + strings.Join(rep.Source.Paths, ", ")
	}
	return s
}

func checkCounts(rep *report.Report) string {
	n := map[report.Status]int{}
	for _, c := range rep.Checks {
		n[c.Status]++
	}
	return fmt.Sprintf("%d checks: %d failed, %d passed, %d partial, %d not evaluated",
		len(rep.Checks), n[report.Fail], n[report.Pass], n[report.Partial], n[report.NotEvaluated])
}

func objects(f finding.Finding, max int) string {
	var names []string
	for i, o := range f.Objects {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(f.Objects)-i))
			break
		}
		if at := report.Where(f, o); at != "" {
			names = append(names, o.String()+" ("+at+")")
			continue
		}
		names = append(names, o.String())
	}
	return strings.Join(names, ", ")
}

// esc escapes the characters CommonMark would read as markup, so that
// titles and messages (which hold names, quotes, globs) render as written.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\`*_{}[]<>()#+!|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// escLineStart escapes what makes a paragraph a list or a rule when it
// starts a line: "- x", "1. x", "2) x", "---".
func escLineStart(s string) string {
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "=") {
		return "\\" + s
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') {
		return s[:i] + "\\" + s[i:]
	}
	return s
}

// cell is esc for one table cell: a line break would end the row.
func cell(s string) string { return esc(strings.Join(strings.Fields(s), " ")) }

// codeFence returns a backtick fence longer than any run of backticks in
// lines, so that evidence can never close its own block.
func codeFence(lines []string) string {
	longest := 0
	for _, l := range lines {
		run := 0
		for _, r := range l {
			if r == '`' {
				run++
				longest = max(longest, run)
			} else {
				run = 0
			}
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
