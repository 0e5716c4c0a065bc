package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/textwrap"
)

// lookupCheck finds a check by ID, case-insensitively or by a unique
// prefix, as cases are found.
func lookupCheck(id string) (check.Check, bool) {
	c, _, ok := checks.Find(id)
	return c, ok
}

func newChecksCommand(app *App) *cobra.Command {
	var output string
	listChecks := func(*cobra.Command, []string) error {
		all := checks.All()
		if output == "json" {
			infos := make([]check.Info, 0, len(all))
			for _, c := range all {
				infos = append(infos, check.Describe(c, caseTitle))
			}
			return writeJSON(app.Out, infos)
		}
		if output != "text" {
			return withCode(ExitError, fmt.Errorf("unknown output format %q (want text or json)", output))
		}
		// The same shape as 'kubegap cases': a count, one row per
		// entry cut to the width, then where to look next.
		width := 0
		for _, c := range all {
			width = max(width, len(c.ID))
		}
		rowCols := app.width()
		if !app.OutIsTerminal {
			rowCols = 0 // whole rows in a pipe or a file
		}
		fmt.Fprintf(app.Out, "Checks: %d\n\n", len(all))
		for _, c := range all {
			fmt.Fprintln(app.Out, listRow(rowCols, fmt.Sprintf("  %-*s  %-8s  ", width, c.ID, c.Severity), c.Title))
		}
		_, err := fmt.Fprintln(app.Out, "\nShow one: kubegap checks show ID (the severity is the highest the check reports)")
		return err
	}
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List kubegap's checks, or show one",
		Long: `List kubegap's checks, or show one.

Without a subcommand, 'kubegap checks' lists them like 'kubegap checks list'.`,
		Args: cobra.NoArgs,
		RunE: listChecks,
	}
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	list := &cobra.Command{
		Use:   "list",
		Short: "List every check with the highest severity it reports",
		Args:  cobra.NoArgs,
		RunE:  listChecks,
	}
	show := &cobra.Command{
		Use:               "show ID",
		Short:             "Show one check: what it looks for, what it reads, the cases it cites",
		Args:              exactlyOneID("a check ID", "kubegap checks list"),
		ValidArgsFunction: oneCheckID,
		RunE: func(_ *cobra.Command, args []string) error {
			c, ok := lookupCheck(args[0])
			if !ok {
				var ids []string
				for _, c := range checks.All() {
					ids = append(ids, c.ID)
				}
				return withCode(ExitError, fmt.Errorf("unknown check %q%s", args[0], checks.DidYouMean(args[0], ids, "kubegap checks list")))
			}
			info := check.Describe(c, caseTitle)
			if output == "json" {
				return writeJSON(app.Out, info)
			}
			if output != "text" {
				return withCode(ExitError, fmt.Errorf("unknown output format %q (want text or json)", output))
			}
			for i, line := range textwrap.Wrap(c.ID+" — "+c.Title, app.width()) {
				if i > 0 {
					line = "  " + line
				}
				fmt.Fprintln(app.Out, line)
			}
			fmt.Fprintf(app.Out, "severity: up to %s\n\n", c.Severity)
			for _, line := range textwrap.Wrap(c.Description, app.width()) {
				fmt.Fprintln(app.Out, line)
			}
			fmt.Fprint(app.Out, "\nreads:\n")
			for _, in := range info.Reads {
				opt := ""
				if in.Optional {
					opt = " (optional)"
				}
				fmt.Fprintf(app.Out, "  %s%s\n", in.Resource, opt)
			}
			fmt.Fprintln(app.Out, "\nrules (each passes only on complete input of what it needs):")
			for _, r := range info.Rules {
				needs := strings.Join(r.Needs, ", ")
				if needs == "" {
					needs = "no listed resource"
				}
				for i, line := range textwrap.Wrap(r.ID+": "+r.Summary, app.width()-4) {
					if i > 0 {
						line = "  " + line
					}
					fmt.Fprintf(app.Out, "  %s\n", line)
				}
				for _, line := range textwrap.Wrap("needs "+needs, app.width()-6) {
					fmt.Fprintf(app.Out, "      %s\n", line)
				}
			}
			fmt.Fprintln(app.Out, "\ncases:")
			for _, cc := range info.Cases {
				for i, line := range textwrap.Wrap(cc.ID+" — "+cc.Phrase(), app.width()-4) {
					if i == 0 {
						fmt.Fprintf(app.Out, "  %s\n", line)
					} else {
						fmt.Fprintf(app.Out, "    %s\n", line)
					}
				}
			}
			_, err := fmt.Fprintf(app.Out, "\nrun it: %s\n", present.AuditCommand([]string{c.ID}))
			return err
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}
