package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/report"
)

func newSnapshotCommand(app *App) *cobra.Command {
	var out string
	var quiet bool
	var only, skip []string
	cmd := &cobra.Command{
		Use:   "snapshot -o FILE|-",
		Short: "Save what a live audit reads, for an offline audit or a support request",
		Long: `Snapshot reads the cluster exactly as 'kubegap audit' would (the same
resources, read-only) and writes it to FILE: gzipped when FILE ends in .gz; "-o -" writes it to
standard output (plain JSON) for a pipe.
'kubegap audit --from FILE' then gives the same findings without the cluster.

The file never holds a Secret (kubegap reads none), and environment variable
values are replaced by "(redacted)". Coverage (what was forbidden or not
served) is kept, so the offline audit marks the same checks not-evaluated.`,
		Example: `  kubegap snapshot -o prod.json.gz --context prod
  kubegap audit --from prod.json.gz`,
		Args: cobra.NoArgs,
	}
	src := newSourceFlags(cmd, false)
	cmd.Flags().StringVarP(&out, "output", "o", "", "file to write (required); .gz compresses; - is standard output")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print no progress on stderr")
	cmd.Flags().StringSliceVar(&only, "checks", nil, "read only what these checks need")
	cmd.Flags().StringSliceVar(&skip, "skip-checks", nil, "do not read for these checks")
	_ = cmd.RegisterFlagCompletionFunc("checks", checkIDs)
	_ = cmd.RegisterFlagCompletionFunc("skip-checks", checkIDs)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if out == "" {
			return withCode(ExitError, errors.New("-o FILE is required"))
		}
		selected, err := audit.Select(checks.All(), only, skip)
		if err != nil {
			return withCode(ExitError, err)
		}
		snap, err := src.load(cmd.Context(), app, audit.Resources(selected), quiet)
		if err != nil {
			return withCode(ExitError, err)
		}
		if out == "-" {
			if err := snap.Write(app.Out); err != nil {
				return withCode(ExitError, fmt.Errorf("writing the snapshot: %w", err))
			}
		} else if err := snap.SaveFile(out); err != nil {
			return withCode(ExitError, fmt.Errorf("writing %s: %w", out, err))
		}
		if !quiet {
			n := 0
			for _, c := range snap.Coverage() {
				n += c.Count
			}
			where := out
			if out == "-" {
				where = "standard output"
			}
			fmt.Fprintf(app.ErrOut, "wrote %s: %s\n", where, report.Plural(n, "object", "objects"))
		}
		return nil
	}
	return cmd
}
