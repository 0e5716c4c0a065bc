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
		Description: `Audit a Kubernetes cluster read-only and return one page of findings, most severe first.
Source (one of): a live cluster (default: the current kube context; context and kubeconfig pick another),
files (YAML/JSON paths on the machine running kubegap; relative ones are resolved against the server's
working directory), or demo=true (the embedded demo cluster).
Parameters, all optional:
- namespace: audit one namespace (default: all); checks that need others report partial, never pass.
- target_version: upgrade preflight to this Kubernetes minor, e.g. "1.35" (default: none; a string, or
  a number whose minor has two digits not ending in 0: 1.36 is taken, 1.4 or 1.40 as numbers are refused
  because JSON drops the trailing zero); adds the
  preflight checks, and findings about the upgrade carry preflight "before" (fix first) or "during";
  page 1 then also has current_version (stated or inferred, with its basis) and plan (the ordered steps,
  each a finding_id of any check, its phase and objects).
- checks / skip_checks: check IDs to run only / to skip (default: all checks; see list_checks).
- min_severity: critical, high, medium, low or info (default: low).
- page_size: 1 to 50 findings per page (default 10); a page also stops before about 10 KB.
- page (from 1, default 1) with audit_id pages an earlier audit; cursor (a next_cursor) gives its next page.
- contexts: audit several kube contexts at once (at most 8, each within --allow-context): the response
  lists each with its own audit_id to page, its summary, or why it could not be audited.
Each finding has a finding_id (stable within this audit), check, severity, title, a few objects with their
total, the first evidence line and the incident case IDs it cites. Page 1 also lists coverage (resources not
read completely), checks that did not pass with the resources they lacked (explain_check with audit_id gives
each rule's reason), and passed. The report is kept under audit_id (the last 8 audits) for get_finding.`,
		InputSchema: auditSchema(),
	}, readOnly(false), h.audit)
	addTool(s, &sdk.Tool{
		Name:  ToolGetFinding,
		Title: "Get one finding in full",
		Description: `Return one finding of an earlier audit in full: message, every object, all evidence, remediation, and the cited cases with their titles.
Parameters (both required): audit_id from an audit response, finding_id from its page (e.g. F3).`,
	}, readOnly(false), h.getFinding)
	addTool(s, &sdk.Tool{
		Name:        ToolListChecks,
		Title:       "List kubegap's checks",
		Description: `List every check: ID, title, highest severity, and the IDs of the incident cases it cites. No parameters. explain_check gives one check in full.`,
	}, readOnly(false), h.listChecks)
	addTool(s, &sdk.Tool{
		Name:  ToolExplainCheck,
		Title: "Explain one check",
		Description: `Explain one check: what it looks for and why, its rules and the resources each needs (what RBAC it needs), and the cases it cites with titles.
Parameters: id (required; case-insensitive, a prefix only one check ID starts with is enough);
audit_id (optional, default none): also say how the check went in that audit, rule by rule, with the reason and the missing resources.`,
		InputSchema: explainCheckSchema(),
	}, readOnly(false), h.explainCheck)
	addTool(s, &sdk.Tool{
		Name:  ToolSearchCases,
		Title: "Search the incident library",
		Description: `Search kubegap's library of public Kubernetes incidents. Parameters, all optional: root_cause, component,
symptom, factor (lists of facet values: OR within a facet, AND across facets; default: no filter), search
(words that must all appear; default: none), limit (1 to 50, default 10) and offset (default 0) to page.
Returns matching cases (id, title, date, short summary), the total, and facet value counts over all matches
so you can narrow further.`,
		InputSchema: searchCasesSchema(),
	}, readOnly(false), h.searchCases)
	addTool(s, &sdk.Tool{
		Name:  ToolGetCase,
		Title: "Get one incident case",
		Description: `Return one incident case in full (symptoms, trigger, root cause, contributing factors, detection, remediation, lessons, sources) plus the kubegap checks that detect it.
Parameter: id (required; case-insensitive, a prefix only one case ID starts with is enough).`,
	}, readOnly(false), h.getCase)
	if opts.AllowRegistry {
		addTool(s, &sdk.Tool{
			Name:  ToolInspectImage,
			Title: "Inspect a container image",
			Description: `Pull a container image from its registry (read-only) and list its ELF executables: static or
dynamic, loader, needed libraries, highest GLIBC_x.y needed, musl, Go build settings, and executables
embedded as gzip payloads. Use it to check whether a host-installing DaemonSet's binaries will run on a node's OS.
Parameters: reference (required, e.g. registry.k8s.io/pause:3.10); platform (optional, os/arch[/variant], default linux/amd64).`,
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

// structuredSince is the protocol version that brought structured tool
// results.
const structuredSince = "2025-06-18"

// textResult is the text content a tool result carries beside its
// structured content. The spec ("Structured content", 2025-06-18 and
// 2025-11-25) says a tool that returns structured content SHOULD also
// return the serialized JSON as text, for backwards compatibility. A
// client that negotiated a version older than 2025-06-18 knows no
// structured content: nil lets the SDK add that JSON text, as it does for
// every typed tool. A newer client reads the structured content (Claude
// Code and Codex hand the model that, not the text), so a second copy of
// the payload would only double the bytes; it gets text that stands on its
// own in a few lines instead — the IDs to pass on and what to call next —
// for a client that shows the model only the text.
func textResult(req *sdk.CallToolRequest, text string) *sdk.CallToolResult {
	if req != nil && req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ProtocolVersion < structuredSince {
			return nil
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// handlers hold the state the tools share: the options and the audits kept
// for paging. One per server, never global.
type handlers struct {
	opts   Options
	audits *auditStore
}
