package web

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
)

// caseIndex is what the static site's script filters: per case its facet
// values, date, checks and lowercased text, ranked as the library ranks.
type caseIndex struct {
	Per    int               `json:"per"`
	Facets []indexFacet      `json:"facets"`
	Cases  []indexCase       `json:"cases"`
	Names  map[string]string `json:"names"`
}

type indexFacet struct {
	Name  string   `json:"name"`
	Param string   `json:"param"`
	Label string   `json:"label"`
	IDs   []string `json:"ids"`
}

type indexCase struct {
	ID     string              `json:"id"`
	Date   string              `json:"date"`
	Facets map[string][]string `json:"f"`
	Checks []string            `json:"k"`
	// Title, Summary and Body are lowercased search text, weighted as
	// library.Query weighs them.
	Title   string `json:"t"`
	Summary string `json:"s"`
	Body    string `json:"b"`
}

func buildIndex(lib *library.Library, o *Options) *caseIndex {
	tax := lib.Taxonomy()
	idx := &caseIndex{Per: defaultPerPage, Names: map[string]string{}}
	for _, f := range library.FacetNames() {
		fi := indexFacet{Name: f, Param: facetParam[f], Label: present.FacetLabel(f)}
		for _, t := range tax.Terms(f) {
			fi.IDs = append(fi.IDs, t.ID)
			idx.Names[f+"/"+t.ID] = t.Name
		}
		idx.Facets = append(idx.Facets, fi)
	}
	for _, c := range lib.Cases() {
		ic := indexCase{ID: c.ID, Date: c.Date, Facets: map[string][]string{}, Checks: []string{},
			Title:   strings.ToLower(c.ID + " " + c.Title),
			Summary: strings.ToLower(c.Organization + " " + c.Summary),
			Body:    strings.ToLower(caseBody(&c)),
		}
		for _, f := range library.FacetNames() {
			ic.Facets[f] = append([]string{}, present.FacetIDs(&c, f)...)
		}
		for _, ch := range present.ChecksCiting(o.Checks, c.ID) {
			ic.Checks = append(ic.Checks, ch.ID)
		}
		idx.Cases = append(idx.Cases, ic)
	}
	return idx
}

// caseBody is a case's text beyond title and summary, for search.
func caseBody(c *library.Case) string {
	parts := append([]string{}, c.Symptoms...)
	parts = append(parts, c.Trigger, c.RootCause.Text, c.Detection)
	for _, f := range c.ContributingFactors {
		parts = append(parts, f.Text)
	}
	parts = append(parts, c.Remediation...)
	parts = append(parts, c.ActionItems...)
	parts = append(parts, c.Lessons...)
	parts = append(parts, c.Detectable.Signal, c.Detectable.Why)
	for _, s := range c.Sources {
		parts = append(parts, s.Title)
	}
	return strings.Join(parts, "\n")
}

// WriteSite writes every page as static files under dir: cases, checks,
// and the report in o.Report (when set), with relative links so the site
// works from any path of any static host or from disk. The case list
// filters in the browser from a JSON index.
func WriteSite(dir string, o Options) error {
	r, err := newRenderer()
	if err != nil {
		return err
	}
	lib := o.Library
	files := map[string][]byte{}
	render := func(path, kind string, p *page) error {
		depth := strings.Count(path, "/")
		p.L = links{mode: modeStatic, up: strings.Repeat("../", depth)}
		var buf bytes.Buffer
		if err := r.render(&buf, kind, p); err != nil {
			return err
		}
		files[path] = buf.Bytes()
		return nil
	}
	idx := buildIndex(lib, &o)
	tax := lib.Taxonomy()
	q, _ := parseCasesQuery(nil, &tax)
	v, bad := casesPage(lib, o.Checks, links{mode: modeStatic, up: "../"}, q, true)
	if bad != nil {
		return bad
	}
	v.Index = idx
	if err := render("cases/index.html", "cases", &page{Title: "Incident library", Nav: "cases", Data: v}); err != nil {
		return err
	}
	for _, c := range lib.Cases() {
		if err := render("cases/"+c.ID+"/index.html", "case", &page{Title: c.Title, Nav: "cases", Data: casePage(lib, o.Checks, &c)}); err != nil {
			return err
		}
	}
	if err := render("checks/index.html", "checks", &page{Title: "Checks", Nav: "checks", Data: checksPage(lib, o.Checks)}); err != nil {
		return err
	}
	for _, c := range o.Checks {
		if err := render("checks/"+c.ID+"/index.html", "check", &page{Title: c.Title, Nav: "checks", Data: checkPage(lib, c)}); err != nil {
			return err
		}
	}
	if o.Report != nil {
		rv := reportPage(o.Report, lib, reportFilter{}, true)
		rv.Name = o.ReportName
		if err := render("report/index.html", "report", &page{Title: "Audit report", Nav: "report", Data: rv}); err != nil {
			return err
		}
	}
	idxJSON, err := json.Marshal(idx)
	if err != nil {
		return err
	}
	files["cases/index.json"] = idxJSON
	files["assets/style.css"] = []byte(styleCSS)
	files["assets/app.js"] = []byte(appJS)
	files["index.html"] = []byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0; url=cases/index.html"><title>kubegap</title></head><body><a href="cases/index.html">Incident library</a></body></html>` + "\n")

	return writeTree(dir, files)
}

// WriteReportHTML writes rep as one self-contained HTML file: styles and
// script inline, the cited cases inside the page, nothing loaded from
// anywhere. Filters work in the browser; the page prints cleanly.
func WriteReportHTML(w io.Writer, rep *report.Report, lib *library.Library) error {
	r, err := newRenderer()
	if err != nil {
		return err
	}
	rv := reportPage(rep, lib, reportFilter{}, true)
	return r.render(w, "report", &page{Title: "Audit report", Nav: "report", L: links{mode: modeInline}, Data: rv})
}
