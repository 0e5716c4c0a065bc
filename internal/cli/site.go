package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/web"
)

func newSiteCommand(app *App) *cobra.Command {
	var dir, reportFile string
	cmd := &cobra.Command{
		Use:   "site -o DIR",
		Short: "Write the incident library, the checks and a report as a static web site",
		Long: `Write the pages of 'kubegap serve' as static files under DIR, for any static
host or to open from disk. Links are relative; the case list filters in the
browser from a JSON index (cases/index.json, also inline in the page).

DIR is created if missing. A DIR that is a symbolic link, or a link at any
file or directory the site writes under DIR, is refused before anything is
written; each file is written fresh (a new file renamed into place).`,
		Example: `  kubegap site -o public
  kubegap site -o public --report report.json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if dir == "" {
				return withCode(ExitError, errors.New("-o DIR is required"))
			}
			opts, err := webOptions(reportFile)
			if err != nil {
				return withCode(ExitError, err)
			}
			if err := web.WriteSite(dir, opts); err != nil {
				return withCode(ExitError, err)
			}
			fmt.Fprintf(app.ErrOut, "kubegap: wrote the site to %s (open %s/cases/index.html); once it is published at https://HOST/PATH/, audit reports link their cases to it with --case-base-url https://HOST/PATH/cases/{id}/\n", dir, dir)
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "output", "o", "", "directory to write the site into (created if missing)")
	cmd.Flags().StringVar(&reportFile, "report", "", "JSON report to publish on report/; default: the demo cluster's")
	return cmd
}
