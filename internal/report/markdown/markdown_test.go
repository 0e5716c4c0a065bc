package markdown

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/reporttest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// render turns the Markdown into HTML with goldmark (CommonMark plus GFM
// tables, as GitHub renders comments) and parses that HTML.
func render(t *testing.T, r *report.Report) (string, *html.Node) {
	t.Helper()
	var md, out bytes.Buffer
	if err := Write(&md, r); err != nil {
		t.Fatal(err)
	}
	gm := goldmark.New(goldmark.WithExtensions(extension.Table), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&out)
	if err != nil {
		t.Fatal(err)
	}
	return md.String(), doc
}

func all(n *html.Node, tag string) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func text(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func TestDemoTablesAndFoldedDetails(t *testing.T) {
	r := reporttest.Demo(t)
	_, doc := render(t, r)
	tables := all(doc, "table")
	if len(tables) != 1 {
		t.Fatalf("%d tables, want the findings (the counts are one line)", len(tables))
	}
	if rows := all(tables[0], "tr"); len(rows) != len(r.Findings)+1 {
		t.Errorf("findings table has %d rows for %d findings", len(rows), len(r.Findings))
	}
	if d := all(doc, "details"); len(d) != len(r.Findings) {
		t.Errorf("%d details blocks for %d findings", len(d), len(r.Findings))
	}
	for i, row := range all(tables[0], "tr")[1:] {
		if got := text(all(row, "td")[3]); got != strings.Join(strings.Fields(r.Findings[i].Title), " ") {
			t.Errorf("row %d title %q, want %q", i, got, r.Findings[i].Title)
		}
	}
	links := 0
	for _, a := range all(doc, "a") {
		for _, at := range a.Attr {
			if at.Key == "href" && strings.HasPrefix(at.Val, report.RepositoryURL+"/blob/main/docs/cases/") && strings.HasSuffix(at.Val, ".md") {
				links++
			}
		}
	}
	if links < len(r.Findings) {
		t.Errorf("%d case links for %d findings", links, len(r.Findings))
	}
}

func TestEscaping(t *testing.T) {
	r := reporttest.Edges()
	md, doc := render(t, r)
	title := r.Findings[0].Title
	rows := all(all(doc, "table")[0], "tr")
	if got := text(all(rows[1], "td")[3]); got != title {
		t.Errorf("title cell %q, want %q\n%s", got, title, md)
	}
	if len(all(doc, "em")) != 0 || len(all(doc, "always")) != 0 {
		t.Errorf("markup leaked from a title or message:\n%s", md)
	}
	body := text(doc)
	for _, want := range []string{"Line two with <b>html</b> and `code`.", "incomplete for other reasons: pod-sandbox-failures, pdb-blocks-drain",
		"pool retired in Q1", "expired on 2026-11-01", "1 new, 0 unchanged, 0 resolved", "namespace payments"} {
		if !strings.Contains(body, want) {
			t.Errorf("rendered text lacks %q", want)
		}
	}
	inBlock := false
	for _, pre := range all(doc, "pre") {
		inBlock = inBlock || strings.Contains(text(pre), "imagePullPolicy=Always")
	}
	if !inBlock {
		t.Error("evidence not in a code block")
	}
	if codeFence([]string{"a ```` b"}) != "`````" {
		t.Error("fence not longer than the evidence's backticks")
	}
}

func TestParagraphsThatLookLikeLists(t *testing.T) {
	r := reporttest.Edges()
	r.Findings[0].Message = "1. not a list\n- not a bullet\n2) nor this\n---"
	_, doc := render(t, r)
	if n := len(all(doc, "ol")) + len(all(doc, "hr")); n != 0 {
		t.Errorf("%d lists or rules from message text", n)
	}
	for _, ul := range all(doc, "ul") {
		if strings.Contains(text(ul), "not a bullet") {
			t.Error("a message line became a bullet")
		}
	}
	body := text(doc)
	for _, want := range []string{"1. not a list", "- not a bullet", "2) nor this"} {
		if !strings.Contains(body, want) {
			t.Errorf("lost %q", want)
		}
	}
}

// TestCoverageAfterFindings: what could not be looked at follows the
// findings, one item per resource, with the command that completes it;
// the per-rule detail only on request.
func TestCoverageAfterFindings(t *testing.T) {
	r := reporttest.Edges()
	r.Coverage = append(r.Coverage, snapshot.Coverage{Resource: "v1/events", Status: snapshot.StatusNotInInput})
	r.Checks = append(r.Checks, report.CheckResult{ID: "pod-sandbox-failures", Status: report.Partial,
		Rules: []report.RuleResult{{ID: "events", Status: report.RulePartial, Reason: "not in the input: events", Missing: []string{"v1/events"}, Category: report.CategoryInput}}})
	md, doc := render(t, r)
	table, cov := strings.Index(md, "| | Severity |"), strings.Index(md, "**Coverage**")
	if table < 0 || cov < table {
		t.Fatalf("coverage missing or before the findings:\n%s", md)
	}
	body := text(doc)
	for _, want := range []string{"events: not in the input — 1 check incomplete",
		"To complete: kubegap recipe > recipe.sh && sh recipe.sh && kubegap audit --from kubegap-dump"} {
		if !strings.Contains(body, want) {
			t.Errorf("rendered text lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "rule by rule") {
		t.Errorf("per-rule detail without ExplainCoverage:\n%s", md)
	}
	var b bytes.Buffer
	if err := WriteWith(&b, r, Options{ExplainCoverage: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "rule by rule") || !strings.Contains(b.String(), "`events` partial: not in the input: events") {
		t.Errorf("ExplainCoverage adds no per-rule detail:\n%s", b.String())
	}
}
