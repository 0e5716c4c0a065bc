package mcp

import (
	"context"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kubegap/kubegap/internal/images"
)

// Options configure a server. The zero value serves the files and demo
// tools and reads live clusters through the default kubeconfig.
type Options struct {
	// Version is reported to clients as the server's version.
	Version string
	// Kubeconfig is the kubeconfig file used when a call names none; ""
	// follows the usual rules (KUBECONFIG, then ~/.kube/config).
	Kubeconfig string
	// Context is the kube context used when a call names none; "" means
	// the kubeconfig's current context.
	Context string
	// AllowContexts, when not empty, are the only contexts the audit tool
	// may read. Any other context is refused with a tool error.
	AllowContexts []string
	// AllowRegistry registers inspect_image, the one tool that contacts
	// the outside world (container registries).
	AllowRegistry bool
	// Images tunes inspect_image; the zero value takes the images
	// package's defaults, as 'kubegap image inspect' does.
	Images images.Options
	// KeepAudits is how many audit reports are kept for paging and
	// get_finding (default 8); the oldest is dropped first.
	KeepAudits int
}

// Tool names, as agents see them (prefixed by the client, e.g.
// mcp__kubegap__audit in Claude Code).
const (
	ToolAudit        = "audit"
	ToolGetFinding   = "get_finding"
	ToolListChecks   = "list_checks"
	ToolExplainCheck = "explain_check"
	ToolSearchCases  = "search_cases"
	ToolGetCase      = "get_case"
	ToolInspectImage = "inspect_image"
)

// instructions tell the agent how the tools fit together; clients show
// them to the model when the session starts.
const instructions = `kubegap audits Kubernetes clusters read-only for the gaps behind public incidents.
Workflow: call audit (a live context, files, or demo=true) -> read the page of findings ->
get_finding for the full evidence and remediation -> get_case for the incident it cites ->
propose a fix for a human to apply. No tool here changes a cluster; do not apply fixes yourself.
Use search_cases to browse the incident library by facet; list_checks/explain_check to see what is checked.`

// NewServer builds the MCP server with kubegap's tools registered.
func NewServer(opts Options) *sdk.Server {
	if opts.KeepAudits <= 0 {
		opts.KeepAudits = defaultKeepAudits
	}
	version := opts.Version
	if version == "" {
		version = "(devel)"
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "kubegap", Title: "kubegap", Version: version}, &sdk.ServerOptions{
		Instructions: instructions,
		// No logging capability: logging is deprecated in the current
		// spec and nothing here would use it.
		Capabilities: &sdk.ServerCapabilities{},
	})
	h := &handlers{opts: opts, audits: newAuditStore(opts.KeepAudits)}

	addTool(s, &sdk.Tool{
		Name:  ToolAudit,
		Title: "Audit a cluster for incident gaps",
		Description: `Audit a Kubernetes cluster read-only (the current kube context, or context/kubeconfig),
or manifest files (files), or the embedded demo cluster (demo=true), and return one page of findings,
most severe first. Each finding has a finding_id (stable within this audit), check, severity, title,
a few objects with their total, the first evidence line, and the incident case IDs it cites.
checks lists those that did not pass (fail, partial with the rules that could not see all they need,
not-evaluated with the reason, often RBAC); passed names the rest.
To page: pass next_cursor back as cursor, or audit_id with page. The report is kept in memory
under audit_id (the last 8 audits) for get_finding.`,
		InputSchema: auditSchema(),
	}, readOnly(false), h.audit)
	addTool(s, &sdk.Tool{
		Name:        ToolGetFinding,
		Title:       "Get one finding in full",
		Description: `Return one finding of an earlier audit in full: message, every object, all evidence, remediation, and the cited cases with their titles.`,
	}, readOnly(false), h.getFinding)
	addTool(s, &sdk.Tool{
		Name:        ToolListChecks,
		Title:       "List kubegap's checks",
		Description: `List every check: ID, title, highest severity, and the incident cases it cites.`,
	}, readOnly(false), h.listChecks)
	addTool(s, &sdk.Tool{
		Name:        ToolExplainCheck,
		Title:       "Explain one check",
		Description: `Explain one check: what it looks for and why, the resources it reads (what RBAC it needs), and the cases it cites with titles.`,
		InputSchema: explainCheckSchema(),
	}, readOnly(false), h.explainCheck)
	addTool(s, &sdk.Tool{
		Name:  ToolSearchCases,
		Title: "Search the incident library",
		Description: `Search kubegap's library of public Kubernetes incidents. Filter by facet values (root_cause,
component, symptom, factor: OR within a facet, AND across facets) and/or search words.
Returns matching cases (id, title, date, short summary), the total, and facet value counts over all matches
so you can narrow further. Page with limit (at most 50) and offset.`,
		InputSchema: searchCasesSchema(),
	}, readOnly(false), h.searchCases)
	addTool(s, &sdk.Tool{
		Name:        ToolGetCase,
		Title:       "Get one incident case",
		Description: `Return one incident case in full (symptoms, trigger, root cause, contributing factors, detection, remediation, lessons, sources) plus the kubegap checks that detect it.`,
	}, readOnly(false), h.getCase)
	if opts.AllowRegistry {
		addTool(s, &sdk.Tool{
			Name:  ToolInspectImage,
			Title: "Inspect a container image",
			Description: `Pull a container image from its registry (read-only) and list its ELF executables: static or
dynamic, loader, needed libraries, highest GLIBC_x.y needed, musl, Go build settings, and executables
embedded as gzip payloads. Use it to check whether a host-installing DaemonSet's binaries will run on a node's OS.`,
		}, readOnly(true), h.inspectImage)
	}
	return s
}

// Run serves on stdin and stdout until the client disconnects or ctx ends.
// Nothing else may write to stdout while it runs.
func Run(ctx context.Context, opts Options) error {
	return NewServer(opts).Run(ctx, &sdk.StdioTransport{})
}

// readOnly returns the annotations every kubegap tool carries. openWorld is
// true only for a tool that talks to something beyond the cluster the
// user chose (a registry).
func readOnly(openWorld bool) *sdk.ToolAnnotations {
	f := false
	return &sdk.ToolAnnotations{
		ReadOnlyHint:    true,
		DestructiveHint: &f,
		IdempotentHint:  true,
		OpenWorldHint:   &openWorld,
	}
}

// addTool registers a typed tool with its annotations and a recover, so a
// bug in one handler is a tool error rather than a dead server.
func addTool[In, Out any](s *sdk.Server, t *sdk.Tool, ann *sdk.ToolAnnotations, h sdk.ToolHandlerFor[In, Out]) {
	t.Annotations = ann
	ann.Title = t.Title
	if t.InputSchema == nil {
		t.InputSchema = inputSchema[In](nil)
	}
	if t.OutputSchema == nil {
		t.OutputSchema = outputSchema[Out]()
	}
	sdk.AddTool(s, t, recoverTool(t.Name, h))
}

// recoverTool turns a panic in h into a tool error naming the tool.
func recoverTool[In, Out any](name string, h sdk.ToolHandlerFor[In, Out]) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				var zero Out
				res, out = nil, zero
				err = fmt.Errorf("internal error in %s: %v (the server is still running; this is a kubegap bug, please report it)", name, p)
			}
		}()
		return h(ctx, req, in)
	}
}

// handlers hold the state the tools share: the options and the audits kept
// for paging. One per server, never global.
type handlers struct {
	opts   Options
	audits *auditStore
}
