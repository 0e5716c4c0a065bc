package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func newRecipeCommand(app *App) *cobra.Command {
	var enable, skip []string
	cmd := &cobra.Command{
		Use:   "recipe",
		Short: "Print the kubectl commands that dump what the checks read, in a form the audit trusts as complete",
		Long: `Recipe prints a shell script that dumps, with kubectl alone, every resource
the selected checks read: one file per resource (kubectl get RESOURCE -A -o json),
plus kubectl api-resources, kubectl version and, when a selected check reads it,
kubectl get --raw /metrics (the API server's count of deprecated-API requests,
as metrics.txt). 'kubegap audit --from DIR' then
treats each dumped resource as complete, as a live audit would: an object missing
from it does not exist. Plain dumps (kubectl get a,b,c -A -o yaml > dump.yaml)
cannot say that, so the audit reports what they lack as unknown.`,
		Example: `  kubegap recipe > recipe.sh
  KUBECTL="kubectl --context prod" DIR=prod-dump sh recipe.sh
  kubegap audit --from prod-dump`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			selected, err := audit.Select(checks.All(), enable, skip)
			if err != nil {
				return withCode(ExitError, err)
			}
			_, err = fmt.Fprint(app.Out, snapshot.RecipeScript(audit.Resources(selected)))
			return err
		},
	}
	cmd.Flags().StringSliceVar(&enable, "checks", nil, "dump only what these checks read")
	cmd.Flags().StringSliceVar(&skip, "skip-checks", nil, "leave out what only these checks read")
	return cmd
}
