package web

import (
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
)

// Paging of the case list.
const (
	defaultPerPage = 20
	maxPerPage     = 100
)

// facetParam is each facet's query parameter: the CLI's flag names.
var facetParam = map[string]string{
	library.FacetRootCause: "root-cause",
	library.FacetComponent: "component",
	library.FacetSymptom:   "symptom",
	library.FacetFactor:    "factor",
}

// Sort orders of the case list.
const (
	sortRelevance = "relevance"
	sortNewest    = "newest"
	sortOldest    = "oldest"
)

// casesQuery is the case list's URL query, parsed and checked.
type casesQuery struct {
	sel    map[string][]string
	search string
	// sort is empty for the default: relevance with a search, else newest.
	sort string
	page int
	per  int
}

// badRequest is a query the page cannot answer, with the HTTP status to
// answer it with.
type badRequest struct {
	status int
	msg    string
	links  []textLink
}

func (e *badRequest) Error() string { return e.msg }

func parseCasesQuery(v url.Values, tax *library.Taxonomy) (casesQuery, *badRequest) {
	q := casesQuery{sel: map[string][]string{}, search: strings.TrimSpace(v.Get("q")), sort: v.Get("sort"), page: 1, per: defaultPerPage}
	for _, facet := range library.FacetNames() {
		for _, id := range v[facetParam[facet]] {
			if _, ok := tax.Term(facet, id); !ok {
				var valid []string
				for _, t := range tax.Terms(facet) {
					valid = append(valid, t.ID)
				}
				return q, &badRequest{status: 400, msg: fmt.Sprintf("Unknown %s %q. Valid values: %s.", present.FacetLabel(facet), id, joinIDs(valid))}
			}
			if !contains(q.sel[facet], id) {
				q.sel[facet] = append(q.sel[facet], id)
			}
		}
	}
	switch q.sort {
	case "", sortRelevance, sortNewest, sortOldest:
	default:
		return q, &badRequest{status: 400, msg: fmt.Sprintf("Unknown sort %q: use relevance, newest or oldest.", q.sort)}
	}
	if s := v.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return q, &badRequest{status: 400, msg: fmt.Sprintf("Page %q is not a page number: pages are numbered from 1.", s)}
		}
		q.page = n
	}
	if s := v.Get("per"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPerPage {
			return q, &badRequest{status: 400, msg: fmt.Sprintf("Page size %q is out of range: use 1 to %d cases per page (default %d).", s, maxPerPage, defaultPerPage)}
		}
		q.per = n
	}
	return q, nil
}

// encode writes the query back, in a stable order; page 1 and the default
// page size are left out so that URLs stay short.
func (q casesQuery) encode() string {
	var parts []string
	add := func(k, v string) { parts = append(parts, url.QueryEscape(k)+"="+url.QueryEscape(v)) }
	for _, facet := range library.FacetNames() {
		for _, id := range q.sel[facet] {
			add(facetParam[facet], id)
		}
	}
	if q.search != "" {
		add("q", q.search)
	}
	if q.sort != "" {
		add("sort", q.sort)
	}
	if q.per != defaultPerPage {
		add("per", strconv.Itoa(q.per))
	}
	if q.page > 1 {
		add("page", strconv.Itoa(q.page))
	}
	return strings.Join(parts, "&")
}

// toggled is q with one facet value added or removed, back on page 1.
func (q casesQuery) toggled(facet, id string) casesQuery {
	n := q
	n.sel = map[string][]string{}
	for f, ids := range q.sel {
		n.sel[f] = append([]string(nil), ids...)
	}
	if contains(n.sel[facet], id) {
		n.sel[facet] = remove(n.sel[facet], id)
	} else {
		n.sel[facet] = append(n.sel[facet], id)
	}
	n.page = 1
	return n
}

func (q casesQuery) libraryQuery() library.Query {
	return library.Query{
		RootCauses: q.sel[library.FacetRootCause],
		Components: q.sel[library.FacetComponent],
		Symptoms:   q.sel[library.FacetSymptom],
		Factors:    q.sel[library.FacetFactor],
		Search:     q.search,
	}
}

// casesView is the case list page.
type casesView struct {
	Facets       []facetView
	Hidden       []hiddenField
	Search       string
	Sorts        []option
	Chips        []textLinkLabel
	Status       string
	Cards        []caseCard
	Pager        []pagerLink
	CheckText    string
	CheckCommand string
	// Index is the JSON index the static site filters with; nil on the
	// server, which filters itself.
	Index *caseIndex
}

type facetView struct {
	Name, Title string
	Values      []facetValueView
}

type facetValueView struct {
	Facet, ID, Name string
	Count           int
	Selected        bool
	Hidden          bool
	Href            string
}

type hiddenField struct{ Name, Value string }

type option struct {
	Value, Label string
	Selected     bool
}

type textLinkLabel struct{ Label, Href string }

type caseCard struct {
	ID, Title, Date, Organization, Summary string
	Terms                                  []present.Term
	Hidden                                 bool
}

type pagerLink struct {
	Text, Href, Rel string
	Current         bool
}

// casesPage builds the case list for q. With all set (the static site),
// every case is rendered and the browser filters; otherwise only the page
// q asks for, and a page past the end is an error.
func casesPage(lib *library.Library, all []check.Check, l links, q casesQuery, static bool) (*casesView, *badRequest) {
	tax := lib.Taxonomy()
	res, err := lib.Query(q.libraryQuery())
	if err != nil {
		return nil, &badRequest{status: 400, msg: err.Error()}
	}
	hits := res.Cases
	sortCases(hits, q)
	total := len(hits)
	pages := max(1, (total+q.per-1)/q.per)
	if q.page > pages && !static {
		last := q
		last.page = pages
		return nil, &badRequest{status: 404,
			msg:   fmt.Sprintf("Page %d is past the end: %d matching cases make %d page(s) of %d.", q.page, total, pages, q.per),
			links: []textLink{{Text: fmt.Sprintf("Go to page %d", pages), Href: l.Cases(last.encode())}, {Text: "All cases", Href: l.Cases("")}}}
	}
	v := &casesView{Search: q.search}
	for _, f := range res.Facets {
		fv := facetView{Name: f.Name, Title: present.FacetTitle(f.Name)}
		for _, val := range f.Values {
			fv.Values = append(fv.Values, facetValueView{
				Facet: f.Name, ID: val.ID, Name: val.Name, Count: val.Count, Selected: val.Selected,
				Hidden: val.Count == 0 && !val.Selected && !static,
				Href:   l.Cases(q.toggled(f.Name, val.ID).encode()),
			})
		}
		v.Facets = append(v.Facets, fv)
	}
	for _, facet := range library.FacetNames() {
		for _, id := range q.sel[facet] {
			v.Hidden = append(v.Hidden, hiddenField{facetParam[facet], id})
			v.Chips = append(v.Chips, textLinkLabel{
				Label: present.FacetLabel(facet) + ": " + present.TermLabel(&tax, facet, id),
				Href:  l.Cases(q.toggled(facet, id).encode()),
			})
		}
	}
	if q.per != defaultPerPage {
		v.Hidden = append(v.Hidden, hiddenField{"per", strconv.Itoa(q.per)})
	}
	for _, s := range []option{{Value: "", Label: "Best match, else newest"}, {Value: sortNewest, Label: "Newest first"}, {Value: sortOldest, Label: "Oldest first"}} {
		s.Selected = s.Value == q.sort
		v.Sorts = append(v.Sorts, s)
	}
	from, to := (q.page-1)*q.per, min(q.page*q.per, total)
	shown := hits[from:to]
	if static {
		shown = hits
	}
	for i, c := range shown {
		card := caseCard{ID: c.ID, Title: c.Title, Date: c.Date, Organization: c.Organization, Summary: c.Summary,
			Hidden: static && (i < from || i >= to)}
		card.Terms = append(card.Terms, present.Term{Facet: library.FacetRootCause, ID: c.RootCause.Category, Name: termName(&tax, library.FacetRootCause, c.RootCause.Category)})
		for _, id := range c.Components {
			card.Terms = append(card.Terms, present.Term{Facet: library.FacetComponent, ID: id, Name: termName(&tax, library.FacetComponent, id)})
		}
		v.Cards = append(v.Cards, card)
	}
	switch {
	case total == 0:
		v.Status = "No case matches."
	default:
		v.Status = fmt.Sprintf("%d to %d of %d cases", from+1, to, total)
	}
	v.Pager = pager(pages, q, l)
	v.CheckText, v.CheckCommand = checkPanel(hits, all)
	return v, nil
}

func termName(tax *library.Taxonomy, facet, id string) string {
	if t, ok := tax.Term(facet, id); ok {
		return t.Name
	}
	return id
}

// sortCases applies an explicit date order; the library already ranks by
// relevance with a search and by date without.
func sortCases(cs []library.Case, q casesQuery) {
	switch {
	case q.sort == sortOldest:
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].Date != cs[j].Date {
				return cs[i].Date < cs[j].Date
			}
			return cs[i].ID < cs[j].ID
		})
	case q.sort == sortNewest && q.search != "":
		sort.SliceStable(cs, func(i, j int) bool {
			if cs[i].Date != cs[j].Date {
				return cs[i].Date > cs[j].Date
			}
			return cs[i].ID < cs[j].ID
		})
	}
}

func pager(pages int, q casesQuery, l links) []pagerLink {
	if pages <= 1 {
		return nil
	}
	at := func(n int) string { p := q; p.page = n; return l.Cases(p.encode()) }
	var out []pagerLink
	if q.page > 1 {
		out = append(out, pagerLink{Text: "Previous", Href: at(q.page - 1), Rel: "prev"})
	}
	for n := 1; n <= pages; n++ {
		out = append(out, pagerLink{Text: strconv.Itoa(n), Href: at(n), Current: n == q.page})
	}
	if q.page < pages {
		out = append(out, pagerLink{Text: "Next", Href: at(q.page + 1), Rel: "next"})
	}
	return out
}

// checkPanel says which checks look for the gaps of the matching cases, as
// one audit command.
func checkPanel(hits []library.Case, all []check.Check) (string, string) {
	var ids []string
	covered := 0
	for i := range hits {
		cs := present.ChecksCiting(all, hits[i].ID)
		if len(cs) > 0 {
			covered++
		}
		for _, ch := range cs {
			if !contains(ids, ch.ID) {
				ids = append(ids, ch.ID)
			}
		}
	}
	sort.Strings(ids)
	if len(ids) == 0 {
		return fmt.Sprintf("No kubegap check covers the %d cases listed yet.", len(hits)), ""
	}
	return fmt.Sprintf("kubegap checks a cluster, read-only, for the gaps behind %d of the %d cases listed:", covered, len(hits)), present.AuditCommand(ids)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func remove(ss []string, s string) []string {
	out := ss[:0]
	for _, x := range ss {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
