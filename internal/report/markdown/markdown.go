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

// Write writes rep as Markdown.
func Write(w io.Writer, rep *report.Report) error {
	var b strings.Builder
	b.WriteString("## kubegap audit\n\n")
	fmt.Fprintf(&b, "%s · %s · %s\n\n", esc(sourceText(rep)), esc(rep.Source.Scope.String()), checkCounts(rep))

	b.WriteString("| Severity | Findings |\n|---|---:|\n")
	for _, sev := range finding.Severities() {
		fmt.Fprintf(&b, "| %s | %d |\n", sev, rep.Summary.Count(sev))
	}
	if rep.Summary.Suppressed > 0 {
		fmt.Fprintf(&b, "| suppressed | %d |\n", rep.Summary.Suppressed)
	}
	b.WriteString("\n")
	if rep.Baseline != nil {
		fmt.Fprintf(&b, "Against the baseline: %d new, %d unchanged, %d resolved.\n\n",
			rep.Baseline.New, rep.Baseline.Unchanged, len(rep.Baseline.Resolved))
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
			details(&b, f)
		}
	} else {
		b.WriteString("No findings.\n\n")
	}

	var unknown []string
	for _, c := range rep.Checks {
		if c.Status == report.NotEvaluated || c.Status == report.Partial {
			unknown = append(unknown, fmt.Sprintf("- `%s` %s: %s", c.ID, c.Status, esc(c.Reason)))
		}
	}
	if len(unknown) > 0 {
		b.WriteString("**Not evaluated or partial** (unknown, not a pass):\n\n" + strings.Join(unknown, "\n") + "\n\n")
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

func details(b *strings.Builder, f finding.Finding) {
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
	if f.Remediation != "" {
		fmt.Fprintf(b, "- **Fix:** %s\n", esc(f.Remediation))
	}
	if len(f.Cases) > 0 {
		var links []string
		for _, c := range f.Cases {
			links = append(links, fmt.Sprintf("[%s](%s)", esc(c), report.CaseURL(c)))
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
