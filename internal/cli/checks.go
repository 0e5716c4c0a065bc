package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
)

// checkInfo is a check as `kubegap checks -o json` and the MCP tools show it.
type checkInfo struct {
	ID          string           `json:"id"`
	Title       string           `json:"title"`
	Severity    finding.Severity `json:"severity"`
	Description string           `json:"description"`
	Reads       []checkInput     `json:"reads"`
	Cases       []checkCase      `json:"cases"`
}

type checkInput struct {
	Resource string `json:"resource"`
	Optional bool   `json:"optional,omitempty"`
}

type checkCase struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
}

func describeCheck(c checks.Check) checkInfo {
	info := checkInfo{ID: c.ID, Title: c.Title, Severity: c.Severity, Description: c.Description}
	for _, in := range c.Reads {
		info.Reads = append(info.Reads, checkInput{Resource: in.Resource.String(), Optional: in.Optional})
	}
	for _, id := range c.Cases {
		info.Cases = append(info.Cases, checkCase{ID: id, Title: caseTitle(id)})
	}
	return info
}

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
				infos := make([]checkInfo, 0, len(all))
				for _, c := range all {
					infos = append(infos, describeCheck(c))
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
			info := describeCheck(c)
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
