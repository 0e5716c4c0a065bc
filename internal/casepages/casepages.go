// Package casepages writes docs/cases: one Markdown page per incident case
// of the library (docs/cases/ID.md) and an index (docs/cases/README.md).
// They are what a report's case links point at by default
// (report.DefaultCaseURL), so that a link works wherever the
// repository is published, with no site to host. A test keeps the files
// in step with the library; UPDATE_DOCS=1 rewrites them.
package casepages

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
)

// Index is the name of the index page.
const Index = "README.md"

// relatedShown is how many related cases a page lists, as the web page does.
const relatedShown = 5

// Pages renders every page, keyed by file name under docs/cases.
func Pages(lib *library.Library, all []check.Check) map[string][]byte {
	tax := lib.Taxonomy()
	pages := map[string][]byte{Index: index(lib)}
	for _, c := range lib.Cases() {
		pages[c.ID+".md"] = page(lib, present.NewCase(&c, &tax, all))
	}
	return pages
}

const generated = "Generated from the incident library by `UPDATE_DOCS=1 go test ./internal/casepages`; a test fails when\nthese pages and the library disagree. `kubegap cases show ID` prints the same case; `kubegap serve` and\n`kubegap site` show it as a web page.\n"

func index(lib *library.Library) []byte {
	var b bytes.Buffer
	b.WriteString("# Incident library\n\n" + generated)
	fmt.Fprintf(&b, "\n%d public incidents, newest first. Each page says what happened, why, how it was found and\nfixed, the sources, and the kubegap checks that look for the gap. How cases are written and\nreviewed: [docs/cases.md](../cases.md).\n\n", len(lib.Cases()))
	b.WriteString("| date | case | organization |\n|---|---|---|\n")
	for _, c := range lib.Cases() {
		fmt.Fprintf(&b, "| %s | [%s](%s.md) | %s |\n", c.Date, cell(c.Title), c.ID, cell(c.Organization))
	}
	return b.Bytes()
}

func page(lib *library.Library, c present.Case) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", text(c.Title))
	meta := []string{c.Date}
	if c.Organization != "" {
		meta = append(meta, text(c.Organization))
	}
	meta = append(meta, "`"+c.ID+"`")
	fmt.Fprintf(&b, "%s · [incident library](%s)\n\n%s\n\n", strings.Join(meta, " · "), Index, text(c.Summary))
	for _, f := range c.Facets {
		if len(f.Terms) == 0 {
			continue
		}
		var names []string
		for _, t := range f.Terms {
			names = append(names, text(t.Name))
		}
		fmt.Fprintf(&b, "- **%s:** %s\n", f.Title, strings.Join(names, ", "))
	}
	b.WriteString("\n## Check your cluster for this\n\n")
	if c.AuditCommand != "" {
		fmt.Fprintf(&b, "Run the checks that look for this gap (read-only; no cluster is changed):\n\n```sh\n%s\n```\n\n", c.AuditCommand)
		fmt.Fprintf(&b, "Or ask Claude Code or Codex (with [kubegap's MCP server](../agents.md)):\n\n```text\n%s\n```\n\nThe checks:\n\n", c.AgentPrompt)
		for _, ch := range c.Checks {
			fmt.Fprintf(&b, "- [%s](../checks.md#%s) `%s`\n", text(ch.Title), ch.ID, ch.ID)
		}
	} else {
		fmt.Fprintf(&b, "%s\n", text(c.NoCheck))
	}
	list(&b, "Symptoms", c.Symptoms)
	para(&b, "Trigger", c.Trigger)
	para(&b, "Root cause", "**"+text(c.RootCauseTerm.Name)+".** "+text(c.RootCauseTerm.Text), raw)
	if len(c.Factors) > 0 {
		var items []string
		for _, f := range c.Factors {
			items = append(items, "**"+text(f.Name)+".** "+text(f.Text))
		}
		list(&b, "Contributing factors", items, raw)
	}
	para(&b, "Detection", c.Detection)
	list(&b, "Remediation", c.Remediation)
	if len(c.ActionItems) > 0 {
		list(&b, "Action items", c.ActionItems)
	}
	list(&b, "Lessons", c.Lessons)
	para(&b, "Detectable read-only", c.DetectableText)
	if len(c.Unverified) > 0 {
		b.WriteString("\n## Unverified\n\nNot confirmed by the sources; stated as inference.\n\n")
		for _, u := range c.Unverified {
			fmt.Fprintf(&b, "- %s\n", text(u))
		}
	}
	b.WriteString("\n## Sources\n\n")
	for _, s := range c.SourceViews {
		detail := s.Kind + ", " + s.Language
		if s.SupportsText != "" {
			detail += "; supports: " + s.SupportsText
		}
		fmt.Fprintf(&b, "- [%s](<%s>) (%s)\n", text(s.Title), s.URL, detail)
	}
	if len(c.Inferences) > 0 {
		b.WriteString("\n### Inferred, not stated by a source\n\n")
		for _, in := range c.Inferences {
			fmt.Fprintf(&b, "- **%s:** %s\n", in.Section, text(in.Why))
		}
	}
	if rel := present.Related(lib, &c.Case, relatedShown); len(rel) > 0 {
		b.WriteString("\n## Related cases\n\n")
		for _, r := range rel {
			fmt.Fprintf(&b, "- [%s](%s.md) (%s)\n", text(r.Title), r.ID, r.Date)
		}
	}
	return b.Bytes()
}

// raw marks text already made Markdown.
const raw = true

func para(b *bytes.Buffer, title, s string, isRaw ...bool) {
	if len(isRaw) == 0 {
		s = text(s)
	}
	fmt.Fprintf(b, "\n## %s\n\n%s\n", title, s)
}

func list(b *bytes.Buffer, title string, items []string, isRaw ...bool) {
	fmt.Fprintf(b, "\n## %s\n\n", title)
	for _, it := range items {
		if len(isRaw) == 0 {
			it = text(it)
		}
		fmt.Fprintf(b, "- %s\n", it)
	}
}

// text is case prose as Markdown: on one line (the YAML folds it), with
// what Markdown would take for markup escaped, except inside the backtick
// code spans the library writes on purpose (`kubectl drain`).
func text(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	// An unpaired last backtick would open a span to the end of the page:
	// it is text.
	ticks := strings.Count(s, "`")
	var b strings.Builder
	inCode := false
	for _, r := range s {
		switch {
		case r == '`' && (ticks > 1 || inCode):
			inCode = !inCode
			ticks--
		case r == '`', !inCode && strings.ContainsRune("\\*_[]<>|", r):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// cell is text for a table cell.
func cell(s string) string { return text(s) }
