package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/checks"
)

func newChecksCommand(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "checks",
		Short: "List kubegap's checks, or show one",
		Args:  cobra.NoArgs,
	}
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	list := &cobra.Command{
		Use:   "list",
		Short: "List every check with its default severity and cited cases",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			all := checks.All()
			if output == "json" {
				infos := make([]checks.Info, 0, len(all))
				for _, c := range all {
					infos = append(infos, checks.Describe(c, caseTitle))
				}
				return writeJSON(app.Out, infos)
			}
			if output != "text" {
				return withCode(ExitError, fmt.Errorf("unknown output format %q (want text or json)", output))
			}
			tw := tabwriter.NewWriter(app.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSEVERITY\tTITLE\tCASES")
			for _, c := range all {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Severity, c.Title, strings.Join(c.Cases, ", "))
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show one check: what it looks for, what it reads, the cases it cites",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, ok := checks.Lookup(args[0])
			if !ok {
				var ids []string
				for _, c := range checks.All() {
					ids = append(ids, c.ID)
				}
				return withCode(ExitError, fmt.Errorf("unknown check %q (known: %s)", args[0], strings.Join(ids, ", ")))
			}
			info := checks.Describe(c, caseTitle)
			if output == "json" {
				return writeJSON(app.Out, info)
			}
			if output != "text" {
				return withCode(ExitError, fmt.Errorf("unknown output format %q (want text or json)", output))
			}
			fmt.Fprintf(app.Out, "%s — %s\nseverity: up to %s\n\n%s\n\nreads:\n", c.ID, c.Title, c.Severity, c.Description)
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
				fmt.Fprintf(app.Out, "  %s: %s\n      needs %s\n", r.ID, r.Summary, needs)
			}
			fmt.Fprintln(app.Out, "\ncases:")
			for _, cc := range info.Cases {
				fmt.Fprintf(app.Out, "  %s — %s\n", cc.ID, cc.Title)
			}
			_, err := fmt.Fprintf(app.Out, "\nrun it: kubegap audit --checks %s\n", c.ID)
			return err
		},
	}
	cmd.AddCommand(list, show)
	return cmd
}
