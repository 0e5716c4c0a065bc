package text

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/textwrap"
)

// IndexHeading starts the index of findings at the top of the text report.
const IndexHeading = "INDEX"

// index prints every finding on one line (severity, ID, title cut to the
// width at a terminal, wrapped whole with Options.Whole: the whole title is in the detail below, under the same ID), most
// severe first. Findings about the same subject (Options.Subject: an
// object, or a node pool) are listed together under it, where the most
// severe of them falls, so that three findings about one legacy pool read
// as one thing to fix. Nothing is printed for fewer than two findings.
func (t *textWriter) index(r *report.Report) {
	if len(r.Findings) < 2 {
		return
	}
	subject := t.opts.Subject
	if subject == nil {
		subject = FirstObject
	}
	bySubject := map[string][]int{}
	for i, f := range r.Findings {
		if s := subject(f); s != "" {
			bySubject[s] = append(bySubject[s], i)
		}
	}
	t.printf("\n%s\n", t.color(ansiBold, fmt.Sprintf("%s (%d findings, most severe first; details below by ID)", IndexHeading, len(r.Findings))))
	// The severity column is as wide as the longest severity shown.
	t.sevWidth = 0
	for _, f := range r.Findings {
		t.sevWidth = max(t.sevWidth, len(f.Severity.String()))
	}
	done := make([]bool, len(r.Findings))
	for i, f := range r.Findings {
		if done[i] {
			continue
		}
		group := bySubject[subject(f)]
		if s := subject(f); s == "" || len(group) < 2 {
			t.indexLine(f, "  ")
			done[i] = true
			continue
		}
		head := subject(f) + ": " + report.Plural(len(group), "finding", "findings")
		if !t.opts.Whole {
			head = cut(head, t.opts.Width-2)
		}
		for _, line := range textwrap.Wrap(head, t.opts.Width-2) {
			t.printf("  %s\n", line)
		}
		for _, j := range group {
			t.indexLine(r.Findings[j], "    ")
			done[j] = true
		}
	}
}

func (t *textWriter) indexLine(f finding.Finding, indent string) {
	sev := fmt.Sprintf("%-*s", t.sevWidth, strings.ToUpper(f.Severity.String()))
	lead := indent + sev + " " + f.ID + " "
	title := strings.Join(strings.Fields(f.Title), " ")
	if f.Preflight != "" {
		title = "(" + f.Preflight + " the upgrade) " + title
	}
	room := max(t.opts.Width-len([]rune(lead)), 10)
	if !t.opts.Whole {
		t.printf("%s%s %s %s\n", indent, t.color(severityColor[f.Severity], sev), t.color(ansiDim, f.ID), cut(title, room))
		return
	}
	// Off a terminal nothing is cut (kubectl never truncates in a pipe):
	// the title wraps under itself instead.
	for i, line := range textwrap.Wrap(title, room) {
		if i == 0 {
			t.printf("%s%s %s %s\n", indent, t.color(severityColor[f.Severity], sev), t.color(ansiDim, f.ID), line)
			continue
		}
		t.printf("%s%s\n", strings.Repeat(" ", len([]rune(lead))), line)
	}
}

// FirstObject is the default subject of a finding: its first object. A
// finding about several nodes and nothing else has none: which pool they
// share, if any, takes their labels to say (a caller's Subject knows).
func FirstObject(f finding.Finding) string {
	if len(f.Objects) == 0 {
		return ""
	}
	if len(f.Objects) > 1 {
		allNodes := true
		for _, o := range f.Objects {
			allNodes = allNodes && o.Kind == "Node"
		}
		if allNodes {
			return ""
		}
	}
	return f.Objects[0].String()
}
