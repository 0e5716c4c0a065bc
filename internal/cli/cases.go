package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/textwrap"
)

// casesDeps is what the cases commands read: the library and the check
// registry. Tests swap in fixtures; the binary uses the embedded library.
type casesDeps struct {
	load   func() (*library.Library, error)
	checks func() []check.Check
}

// facetFlag ties a library facet to its CLI flag and the label text output
// uses for it (present.FacetLabel).
type facetFlag struct{ facet, flag, label string }

// facetFlags lists the facets in display order.
func facetFlags() []facetFlag {
	flags := map[string]string{
		library.FacetRootCause: "root-cause",
		library.FacetComponent: "component",
		library.FacetSymptom:   "symptom",
		library.FacetFactor:    "factor",
	}
	var out []facetFlag
	for _, f := range library.FacetNames() {
		out = append(out, facetFlag{f, flags[f], present.FacetLabel(f)})
	}
	return out
}

// casesListOptions are the flags of `cases list` (and of bare `cases`).
type casesListOptions struct {
	rootCauses, components, symptoms, factors []string
	search                                    string
	limit, offset                             int
	output                                    string
}

func newCasesCommand(app *App) *cobra.Command {
	return newCasesCommandWith(app, casesDeps{load: library.Default, checks: checks.All})
}

func newCasesCommandWith(app *App, deps casesDeps) *cobra.Command {
	var opts casesListOptions
	cmd := &cobra.Command{
		Use:   "cases",
		Short: "Browse the incident library: public Kubernetes failures behind kubegap's checks",
		Long: `Browse the incident library: public Kubernetes failures written up as cases,
filed by root cause, component, symptom and contributing factor.

Without a subcommand, 'kubegap cases' lists cases like 'kubegap cases list'.`,
		Example: `  kubegap cases list --component cni-plugin --symptom sandbox-failure
  kubegap cases list --search glibc -o json
  kubegap cases show azure-cni-v2-glibc
  kubegap cases facets`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runCasesList(app, deps, &opts) },
	}
	addCasesListFlags(cmd, &opts)
	cmd.AddCommand(
		newCasesListCommand(app, deps),
		newCasesShowCommand(app, deps),
		newCasesFacetsCommand(app, deps),
	)
	return cmd
}

func addCasesListFlags(cmd *cobra.Command, opts *casesListOptions) {
	f := cmd.Flags()
	f.StringSliceVar(&opts.rootCauses, "root-cause", nil, "only cases with this root cause (repeatable; values are alternatives)")
	f.StringSliceVar(&opts.components, "component", nil, "only cases involving this component (repeatable; values are alternatives)")
	f.StringSliceVar(&opts.symptoms, "symptom", nil, "only cases with this symptom (repeatable; values are alternatives)")
	f.StringSliceVar(&opts.factors, "factor", nil, "only cases with this contributing factor (repeatable; values are alternatives)")
	f.StringVar(&opts.search, "search", "", "words that must all appear in a case; title matches rank first")
	f.IntVar(&opts.limit, "limit", 20, "cases per page; 0 shows all")
	f.IntVar(&opts.offset, "offset", 0, "matching cases to skip")
	f.StringVarP(&opts.output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	for _, ff := range facetFlags() {
		_ = cmd.RegisterFlagCompletionFunc(ff.flag, facetValues(ff.facet))
	}
}

func newCasesListCommand(app *App, deps casesDeps) *cobra.Command {
	var opts casesListOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List cases, filtered by facet and search, with counts per facet",
		Long: `List cases newest first, or by relevance with --search. Facet flags combine
with AND across facets and OR within one: --component a --component b
--symptom c lists cases involving a or b that show c. Counts per facet value
cover every matching case, not only the page shown.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return runCasesList(app, deps, &opts) },
	}
	addCasesListFlags(cmd, &opts)
	return cmd
}

func newCasesShowCommand(app *App, deps casesDeps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one case in full, its sources, and the checks that look for it",
		Long: `Show one case in full. The ID matches case-insensitively, and a unique
prefix is enough: 'kubegap cases show azure-cni' finds azure-cni-v2-glibc.`,
		Args:              exactlyOneID("a case ID", "kubegap cases list"),
		ValidArgsFunction: caseIDs,
		RunE: func(_ *cobra.Command, args []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			lib, err := loadLibrary(deps)
			if err != nil {
				return err
			}
			c, err := findCase(lib, args[0])
			if err != nil {
				return withCode(ExitError, err)
			}
			tax := lib.Taxonomy()
			pc := present.NewCase(&c, &tax, deps.checks())
			if output == "json" {
				ids := make([]string, len(pc.Checks))
				for i, ch := range pc.Checks {
					ids[i] = ch.ID
				}
				return writeJSON(app.Out, caseJSON{APIVersion: apiVersion, Kind: "Case", Case: c, Checks: ids})
			}
			return writeCaseText(app.Out, &pc)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	return cmd
}

// findCase finds a case by ID, case-insensitively, or by a prefix that
// only one case ID starts with.
func findCase(lib *library.Library, id string) (library.Case, error) {
	c, candidates, ok := lib.Find(id)
	switch {
	case ok:
		return c, nil
	case len(candidates) == 0:
		return library.Case{}, unknownCaseError(lib, strings.ToLower(strings.TrimSpace(id)))
	}
	return library.Case{}, fmt.Errorf("%q matches %d cases: %s", id, len(candidates), strings.Join(candidates, ", "))
}

// exactlyOneID is cobra.ExactArgs(1) with messages that say what is
// missing and where to find one.
func exactlyOneID(what, listCmd string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return withCode(ExitError, fmt.Errorf("%s needs %s (see '%s')", cmd.CommandPath(), what, listCmd))
		case len(args) > 1:
			return withCode(ExitError, fmt.Errorf("%s takes one ID, got %d", cmd.CommandPath(), len(args)))
		}
		return nil
	}
}

func newCasesFacetsCommand(app *App, deps casesDeps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "facets",
		Short: "List every facet value with its description and how many cases carry it",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := checkOutputFormat(output); err != nil {
				return err
			}
			lib, err := loadLibrary(deps)
			if err != nil {
				return err
			}
			res, err := lib.Query(library.Query{})
			if err != nil {
				return withCode(ExitError, err)
			}
			out := facetsJSON{APIVersion: apiVersion, Kind: "CaseFacets", Total: res.Total}
			tax := lib.Taxonomy()
			for _, ff := range facetFlags() {
				counts := map[string]int{}
				if f, ok := res.Facet(ff.facet); ok {
					for _, v := range f.Values {
						counts[v.ID] = v.Count
					}
				}
				fj := facetJSON{Name: ff.facet, Flag: "--" + ff.flag, Values: []facetValueJSON{}}
				// Taxonomy order, not count order: this is the reference
				// listing, and the taxonomy groups related values.
				for _, t := range tax.Terms(ff.facet) {
					fj.Values = append(fj.Values, facetValueJSON{ID: t.ID, Name: t.Name, Description: t.Description, Count: counts[t.ID]})
				}
				out.Facets = append(out.Facets, fj)
			}
			if output == "json" {
				return writeJSON(app.Out, out)
			}
			return writeFacetsText(app.Out, &out, app.width())
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// apiVersion marks kubegap's JSON documents, as in the audit report.
const apiVersion = "kubegap.dev/v1alpha1"

// caseListJSON is `cases list -o json`: the query as understood, then the
// page and facet counts.
type caseListJSON struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Query      library.Query `json:"query"`
	library.Result
}

// caseJSON is `cases show -o json`: the case and the IDs of the checks that
// cite it.
type caseJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	library.Case
	Checks []string `json:"checks"`
}

type facetsJSON struct {
	APIVersion string      `json:"apiVersion"`
	Kind       string      `json:"kind"`
	Total      int         `json:"total"`
	Facets     []facetJSON `json:"facets"`
}

type facetJSON struct {
	Name   string           `json:"name"`
	Flag   string           `json:"flag"`
	Values []facetValueJSON `json:"values"`
}

type facetValueJSON struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Count       int    `json:"count"`
}

func runCasesList(app *App, deps casesDeps, opts *casesListOptions) error {
	if err := checkOutputFormat(opts.output); err != nil {
		return err
	}
	if opts.limit < 0 {
		return withCode(ExitError, fmt.Errorf("--limit %d is negative", opts.limit))
	}
	if opts.offset < 0 {
		return withCode(ExitError, fmt.Errorf("--offset %d is negative", opts.offset))
	}
	lib, err := loadLibrary(deps)
	if err != nil {
		return err
	}
	q := library.Query{
		RootCauses: opts.rootCauses,
		Components: opts.components,
		Symptoms:   opts.symptoms,
		Factors:    opts.factors,
		Search:     opts.search,
		Limit:      opts.limit,
		Offset:     opts.offset,
	}
	res, err := lib.Query(q)
	if err != nil {
		return withCode(ExitError, err)
	}
	if opts.output == "json" {
		return writeJSON(app.Out, caseListJSON{APIVersion: apiVersion, Kind: "CaseList", Query: q, Result: res})
	}
	return writeCaseListText(app.Out, &q, &res, app.width(), !app.OutIsTerminal)
}

func checkOutputFormat(o string) error {
	if o != "text" && o != "json" {
		return withCode(ExitError, fmt.Errorf("unknown output format %q (want text or json)", o))
	}
	return nil
}

func loadLibrary(deps casesDeps) (*library.Library, error) {
	lib, err := deps.load()
	if err != nil {
		return nil, withCode(ExitError, fmt.Errorf("loading the incident library: %w", err))
	}
	return lib, nil
}

// unknownCaseError names close IDs, since a case ID is long and easy to
// half-remember.
func unknownCaseError(lib *library.Library, id string) error {
	var near []string
	for _, c := range lib.Cases() {
		if id != "" && (strings.Contains(c.ID, id) || strings.Contains(id, c.ID)) {
			near = append(near, c.ID)
		}
	}
	sort.Strings(near)
	if len(near) > 3 {
		near = near[:3]
	}
	if len(near) > 0 {
		return fmt.Errorf("unknown case %q (did you mean %s?)", id, strings.Join(near, ", "))
	}
	return fmt.Errorf("unknown case %q (see kubegap cases list)", id)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("writing JSON: %w", err)
	}
	return nil
}

// errWriter remembers the first write error so renderers can write freely
// and report once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func writeCaseListText(w io.Writer, q *library.Query, res *library.Result, cols int, whole bool) error {
	// Rows are whole, never cut, when stdout is no terminal.
	rowCols := cols
	if whole {
		rowCols = 0
	}
	ew := &errWriter{w: w}
	shown := len(res.Cases)
	switch {
	case res.Total == 0:
		ew.printf("Cases: 0 · no case matches\n")
	case shown == 0:
		ew.printf("Cases: %d · showing none: offset %d is past the last case\n", res.Total, res.Offset)
	default:
		ew.printf("Cases: %d · showing %d to %d of %d\n", res.Total, res.Offset+1, res.Offset+shown, res.Total)
	}
	if filter := describeFilter(q); filter != "" {
		ew.printf("Filter: %s\n", filter)
	}
	if shown > 0 {
		ew.printf("\n")
		// The ID column is as wide as the longest ID that still leaves
		// room for a title; longer IDs take a line of their own.
		width := 0
		for _, c := range res.Cases {
			if len(c.ID) <= cols-36 || whole {
				width = max(width, len(c.ID))
			}
		}
		for _, c := range res.Cases {
			if len(c.ID) > width {
				ew.printf("  %s\n", c.ID)
				ew.printf("%s\n", listRow(rowCols, fmt.Sprintf("  %-*s  %-10s  ", width, "", c.Date), c.Title))
				continue
			}
			ew.printf("%s\n", listRow(rowCols, fmt.Sprintf("  %-*s  %-10s  ", width, c.ID, c.Date), c.Title))
		}
		if next := res.Offset + shown; next < res.Total {
			ew.printf("\nNext page: add --offset %d\n", next)
		}
	}
	if res.Total > 0 {
		ew.printf("\n")
		for _, ff := range facetFlags() {
			f, _ := res.Facet(ff.facet)
			var parts []string
			for _, v := range f.Values {
				if v.Count > 0 {
					parts = append(parts, fmt.Sprintf("%s %d", v.ID, v.Count))
				}
			}
			if len(parts) == 0 {
				parts = []string{"none"}
			}
			for _, line := range textwrap.Wrap("by "+ff.label+": "+strings.Join(parts, ", "), cols-4) {
				if !strings.HasPrefix(line, "by ") {
					line = "    " + line
				}
				ew.printf("%s\n", line)
			}
		}
	}
	return ew.err
}

// describeFilter says in one line what a query selects, so a page of
// results is never mistaken for the whole library.
func describeFilter(q *library.Query) string {
	var parts []string
	sel := [][]string{q.RootCauses, q.Components, q.Symptoms, q.Factors}
	for i, ff := range facetFlags() {
		if len(sel[i]) > 0 {
			parts = append(parts, ff.label+" "+strings.Join(sel[i], " or "))
		}
	}
	if strings.TrimSpace(q.Search) != "" {
		parts = append(parts, fmt.Sprintf("search %q", q.Search))
	}
	return strings.Join(parts, " · ")
}

func writeFacetsText(w io.Writer, f *facetsJSON, cols int) error {
	ew := &errWriter{w: w}
	ew.printf("Facets of %d cases. Filter with kubegap cases list --FLAG VALUE.\n", f.Total)
	for _, fj := range f.Facets {
		ew.printf("\n%s (%s)\n", present.FacetTitle(fj.Name), fj.Flag)
		width := 0
		for _, v := range fj.Values {
			width = max(width, len(v.ID))
		}
		for _, v := range fj.Values {
			prefix := fmt.Sprintf("  %-*s %3d  ", width, v.ID, v.Count)
			for i, line := range textwrap.Wrap(v.Name+": "+v.Description, max(20, cols-len(prefix))) {
				if i > 0 {
					prefix = strings.Repeat(" ", len(prefix))
				}
				ew.printf("%s%s\n", prefix, line)
			}
		}
	}
	return ew.err
}

// textWidth is where case text wraps: readable in an 80-column terminal
// with the indent.
const textWidth = 76

func writeCaseText(w io.Writer, c *present.Case) error {
	ew := &errWriter{w: w}
	para := func(indent, text string) {
		for _, line := range textwrap.Wrap(text, textWidth-len(indent)) {
			ew.printf("%s%s\n", indent, line)
		}
	}
	bullets := func(items []string) {
		for _, it := range items {
			lines := textwrap.Wrap(it, textWidth-4)
			for i, line := range lines {
				if i == 0 {
					ew.printf("  - %s\n", line)
				} else {
					ew.printf("    %s\n", line)
				}
			}
		}
	}
	section := func(title string) { ew.printf("\n%s\n", title) }

	ew.printf("%s\n", c.ID)
	para("", c.Title)
	meta := "Date: " + c.Date
	if c.Organization != "" {
		meta += " · Organization: " + c.Organization
	}
	if c.Reviewed != "" {
		meta += " · Reviewed: " + c.Reviewed
	}
	ew.printf("%s\n\n", meta)

	labels := func(terms []present.Term) string {
		out := make([]string, len(terms))
		for i, t := range terms {
			out[i] = t.Label()
		}
		return strings.Join(out, ", ")
	}
	facetHeads := map[string]string{
		library.FacetRootCause: "Root cause:  ",
		library.FacetComponent: "Components:  ",
		library.FacetSymptom:   "Symptoms:    ",
		library.FacetFactor:    "Factors:     ",
	}
	for _, ft := range c.Facets {
		// A case always has a root cause, components and symptoms; the
		// factors line is left out when there are none.
		if ft.Facet == library.FacetFactor && len(ft.Terms) == 0 {
			continue
		}
		ew.printf("%s%s\n", facetHeads[ft.Facet], labels(ft.Terms))
	}

	section("Summary")
	para("  ", c.Summary)
	section("Symptoms")
	bullets(c.Symptoms)
	section("Trigger")
	para("  ", c.Trigger)
	section("Root cause")
	para("  ", c.RootCauseTerm.Text)
	if len(c.Factors) > 0 {
		section("Contributing factors")
		items := make([]string, len(c.Factors))
		for i, f := range c.Factors {
			items[i] = f.Label() + ": " + f.Text
		}
		bullets(items)
	}
	section("Detection")
	para("  ", c.Detection)
	section("Remediation")
	bullets(c.Remediation)
	if len(c.ActionItems) > 0 {
		section("Action items")
		bullets(c.ActionItems)
	}
	section("Lessons")
	bullets(c.Lessons)

	section("Detectable read-only")
	para("  ", c.DetectableText)
	if len(c.Unverified) > 0 {
		section("Unverified")
		bullets(c.Unverified)
	}
	if len(c.Inferred) > 0 {
		// Sections no source states outright, with why they are written.
		section("Inferred")
		names := slices.Sorted(maps.Keys(c.Inferred))
		items := make([]string, len(names))
		for i, n := range names {
			items[i] = n + ": " + c.Inferred[n]
		}
		bullets(items)
	}
	section("Sources")
	for _, s := range c.Sources {
		lines := textwrap.Wrap(fmt.Sprintf("[%s, %s] %s", s.Kind, s.Language, s.Title), textWidth-4)
		for i, line := range lines {
			if i == 0 {
				ew.printf("  - %s\n", line)
			} else {
				ew.printf("    %s\n", line)
			}
		}
		ew.printf("    %s\n", s.URL)
		if len(s.Supports) > 0 {
			for _, line := range textwrap.Wrap("supports: "+strings.Join(s.Supports, ", "), textWidth-4) {
				ew.printf("    %s\n", line)
			}
		}
	}
	ew.printf("\n%s\n", c.CheckLine())
	return ew.err
}

// listRow is one row of a list: the fixed columns, then the title. At a
// terminal (cols > 0) a title longer than the room left wraps under its
// own column, or, when the fixed columns leave no room, goes on lines of
// its own below; nothing is cut (show gives the rest). Elsewhere (cols
// 0: a pipe, a file) the row is whole on one line, as kubectl's are.
func listRow(cols int, fixed, title string) string {
	if cols <= 0 {
		return fixed + title
	}
	room := cols - len([]rune(fixed))
	indent := strings.Repeat(" ", len([]rune(fixed)))
	lines := textwrap.Wrap(title, room)
	if room < 30 {
		indent = "      "
		lines = textwrap.Wrap(title, cols-6)
		return strings.TrimRight(fixed, " ") + "\n" + indent + strings.Join(lines, "\n"+indent)
	}
	return fixed + strings.Join(lines, "\n"+indent)
}
