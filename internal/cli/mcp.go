package cli

import (
	"github.com/spf13/cobra"

	kgmcp "github.com/kubegap/kubegap/internal/mcp"
)

func newMCPCommand(app *App) *cobra.Command {
	var opts kgmcp.Options
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve kubegap's read-only tools to coding agents (MCP over stdio)",
		Long: `Runs a Model Context Protocol server on stdin and stdout for Claude Code, Codex
and other agents. Its tools only read: audit a cluster, files or the demo
cluster; page through findings; open a finding; list and explain checks;
search and open incident cases. No tool can change a cluster: live reads go
through the same GET-only client as 'kubegap audit'.

--allow-context limits which kube contexts an agent may audit.
--allow-registry adds inspect_image, the one tool that contacts the outside
world (container registries).

Logs and errors go to stderr; stdout carries only the protocol.`,
		Example: `  claude mcp add kubegap -- kubegap mcp
  claude mcp add kubegap -- kubegap mcp --allow-context staging --allow-context prod
  codex mcp add kubegap -- kubegap mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tuneGC(app)
			opts.Version = buildVersion()
			if err := kgmcp.Run(cmd.Context(), opts); err != nil && cmd.Context().Err() == nil {
				return withCode(ExitError, err)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Kubeconfig, "kubeconfig", "", "kubeconfig file for live audits when a call names none (default: KUBECONFIG, then ~/.kube/config)")
	fl.StringVar(&opts.Context, "context", "", "kube context for live audits when a call names none (default: the kubeconfig's current context)")
	fl.StringArrayVar(&opts.AllowContexts, "allow-context", nil, "audit only this context; repeat for more (default: any context in the kubeconfig)")
	fl.BoolVar(&opts.AllowRegistry, "allow-registry", false, "register inspect_image, which pulls images from registries")
	return cmd
}
