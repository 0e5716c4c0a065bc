// Package web renders the incident library, the check catalogue and audit
// reports as HTML: served by 'kubegap serve', written as a static site by
// 'kubegap site', and as one self-contained file by 'kubegap audit -o html'.
// Pages are rendered on the server with html/template, so every page works
// without JavaScript; the script only filters in the browser where there is
// no server (the static site and the HTML report).
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets/style.css
var styleCSS string

//go:embed assets/app.js
var appJS string

// mode is how pages link to each other and load their assets.
type mode string

const (
	// modeServer: absolute paths served by 'kubegap serve'.
	modeServer mode = "server"
	// modeStatic: relative paths between files of a static site.
	modeStatic mode = "static"
	// modeInline: one file; assets inline, cases as anchors in the page.
	modeInline mode = "inline"
)

// links builds the URLs of one page. Templates call its methods, so one
// template serves every mode.
type links struct {
	mode mode
	// up is the relative path from a static page to the site root, e.g.
	// "../../" for cases/ID/index.html.
	up string
}

func (l links) page(p string) string {
	switch l.mode {
	case modeStatic:
		if p == "" {
			return l.up + "index.html"
		}
		return l.up + p + "/index.html"
	default:
		return "/" + p
	}
}

func withQuery(u, q string) string {
	if q == "" {
		return u
	}
	return u + "?" + q
}

// Cases links to the case list with an encoded query (may be empty).
func (l links) Cases(q string) string { return withQuery(l.page("cases"), q) }

// CasesFacet links to the cases carrying one facet value.
func (l links) CasesFacet(facet, id string) string {
	return l.Cases(url.Values{facetParam[facet]: {id}}.Encode())
}

// Case links to one case.
func (l links) Case(id string) string {
	if l.mode == modeInline {
		return "#case-" + id
	}
	return l.page("cases/" + id)
}

// Checks links to the catalogue.
func (l links) Checks() string { return l.page("checks") }

// Check links to one check; empty in a single-file report, which has no
// catalogue.
func (l links) Check(id string) string {
	if l.mode == modeInline {
		return ""
	}
	return l.page("checks/" + id)
}

// Report links to the report page with an encoded query.
func (l links) Report(q string) string {
	if l.mode == modeInline {
		return withQuery("", q)
	}
	return withQuery(l.page("report"), q)
}

// Asset links to a file under assets/.
func (l links) Asset(name string) string {
	if l.mode == modeStatic {
		return l.up + "assets/" + name
	}
	return "/assets/" + name
}

// page is what the layout template renders.
type page struct {
	Title  string
	Nav    string
	Mode   mode
	Inline bool
	CSS    template.CSS
	JS     template.JS
	L      links
	Data   any
}

// renderer holds one parsed template set per page kind.
type renderer struct {
	pages map[string]*template.Template
}

func newRenderer() (*renderer, error) {
	base, err := template.New("").ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parsing layout: %w", err)
	}
	r := &renderer{pages: map[string]*template.Template{}}
	for _, name := range []string{"cases", "case", "checks", "check", "report"} {
		t, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := t.ParseFS(templateFS, "templates/"+name+".html"); err != nil {
			return nil, fmt.Errorf("parsing %s: %w", name, err)
		}
		r.pages[name] = t
	}
	t, err := base.Clone()
	if err != nil {
		return nil, err
	}
	if _, err := t.New("content").Parse(`{{template "error-content" .}}`); err != nil {
		return nil, err
	}
	r.pages["error"] = t
	return r, nil
}

// render writes a whole page. It renders into a buffer first so that a
// template error never leaves half a page behind a 200.
func (r *renderer) render(w io.Writer, kind string, p *page) error {
	if p.Mode == "" {
		p.Mode = p.L.mode
	}
	if p.Mode == modeInline {
		p.Inline = true
		p.CSS = template.CSS(styleCSS)
		p.JS = template.JS(appJS)
	}
	var buf bytes.Buffer
	if err := r.pages[kind].ExecuteTemplate(&buf, "layout", p); err != nil {
		return fmt.Errorf("rendering %s page: %w", kind, err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// errorView is the body of an error page.
type errorView struct {
	Heading string
	Message string
	Links   []textLink
}

type textLink struct{ Text, Href string }

// joinIDs lists IDs for messages.
func joinIDs(ids []string) string { return strings.Join(ids, ", ") }
