package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/cluster"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// sourceFlags choose what an audit or snapshot reads: a live cluster through
// kubectl's flags, files, or the demo cluster.
type sourceFlags struct {
	kube          *genericclioptions.ConfigFlags
	allNamespaces bool
	from          []string
	demo          bool
}

func newSourceFlags(cmd *cobra.Command, offline bool) *sourceFlags {
	f := &sourceFlags{kube: genericclioptions.NewConfigFlags(true)}
	f.kube.AddFlags(cmd.Flags())
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false,
		"read every namespace (the default unless -n is given; accepted for kubectl habits)")
	if offline {
		cmd.Flags().StringArrayVar(&f.from, "from", nil,
			"read files or directories instead of a cluster: YAML or JSON, List objects, multi-document, gzip, kubegap snapshots (repeatable)")
		cmd.Flags().BoolVar(&f.demo, "demo", false, "audit the embedded demo cluster, which shows the founding gaps")
	}
	return f
}

// load reads the snapshot the flags choose. Progress goes to stderr.
func (f *sourceFlags) load(ctx context.Context, app *App, resources []snapshot.Resource, quiet bool) (*snapshot.Snapshot, error) {
	tuneGC(app)
	if f.allNamespaces && f.namespace() != "" {
		return nil, errors.New("-A/--all-namespaces and -n/--namespace cannot be combined")
	}
	var offline func() (*snapshot.Snapshot, error)
	switch {
	case f.demo && len(f.from) > 0:
		return nil, errors.New("--demo and --from cannot be combined")
	case f.demo:
		offline = demo.Snapshot
	case len(f.from) > 0:
		offline = func() (*snapshot.Snapshot, error) {
			w := &warnings{app: app}
			defer w.done()
			return snapshot.LoadPaths(f.from, snapshot.WithWarnings(w.print))
		}
	}
	if offline != nil {
		// -n means the same offline as live: the audit sees only that
		// namespace's objects, and says so in its scope.
		s, err := offline()
		if err == nil && f.namespace() != "" {
			err = s.Restrict([]string{f.namespace()})
		}
		return s, err
	}
	cfg, err := f.kube.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	contextName := *f.kube.Context
	if contextName == "" {
		if raw, err := f.kube.ToRawKubeConfigLoader().RawConfig(); err == nil {
			contextName = raw.CurrentContext
		}
	}
	opts := cluster.Options{Namespace: f.namespace(), Context: contextName}
	if !quiet {
		p := newProgress(app)
		opts.Progress = p.update
		defer p.done()
	}
	s, err := cluster.Collect(ctx, cfg, resources, opts)
	if err != nil && contextName != "" {
		return nil, fmt.Errorf("context %q: %w", contextName, err)
	}
	return s, err
}

// maxWarnings bounds the warnings printed for one load: a generated dump
// can repeat one mistake in every object.
const maxWarnings = 20

// warnings prints what the loader read differently from how it is
// written, on stderr, whatever --quiet says: it changes what was audited.
type warnings struct {
	app *App
	n   int
}

func (w *warnings) print(warn snapshot.Warning) {
	w.n++
	if w.n <= maxWarnings {
		fmt.Fprintln(w.app.ErrOut, "kubegap: warning: "+warn.String())
	}
}

func (w *warnings) done() {
	if w.n > maxWarnings {
		fmt.Fprintf(w.app.ErrOut, "kubegap: warning: %d more warnings not shown\n", w.n-maxWarnings)
	}
}

func (f *sourceFlags) namespace() string {
	if f.kube.Namespace == nil {
		return ""
	}
	return *f.kube.Namespace
}

type auditFlags struct {
	output        string
	failOn        string
	checks        []string
	skipChecks    []string
	quiet         bool
	inspectImages bool
	failOnUnknown bool
	targetVersion string
}

func newAuditCommand(app *App) *cobra.Command {
	var fl auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Audit a cluster, files or the demo cluster for the gaps behind public incidents",
		Long: `Audit reads a cluster read-only (kubectl's flags pick the kubeconfig, context
and namespace), or files with --from, or the embedded demo cluster with --demo,
and reports each gap with its objects, evidence, fix and the incident cases
behind it.

Exit codes: 0 no finding at or above --fail-on, 1 at least one, 2 the audit
could not run.`,
		Example: `  kubegap audit --demo
  kubegap audit --context prod -o json
  kubectl get nodes,pods,daemonsets -A -o yaml > dump.yaml && kubegap audit --from dump.yaml
  kubegap audit --checks host-binary-glibc,version-skew --fail-on medium`,
		Args: cobra.NoArgs,
	}
	src := newSourceFlags(cmd, true)
	cmd.Flags().StringVarP(&fl.output, "output", "o", "text", "output format: text, json or html (one self-contained page)")
	cmd.Flags().StringVar(&fl.failOn, "fail-on", "high", "exit 1 when a finding is at or above this severity: critical, high, medium, low, info")
	cmd.Flags().StringSliceVar(&fl.checks, "checks", nil, "run only these checks (comma-separated IDs; see 'kubegap checks list')")
	cmd.Flags().StringSliceVar(&fl.skipChecks, "skip-checks", nil, "skip these checks")
	cmd.Flags().BoolVarP(&fl.quiet, "quiet", "q", false, "print no progress on stderr")
	cmd.Flags().StringVar(&fl.targetVersion, "target-version", "",
		"upgrade preflight: also judge the cluster as it will be during and after an upgrade to this Kubernetes minor (e.g. 1.35)")
	cmd.Flags().BoolVar(&fl.failOnUnknown, "fail-on-unknown", false,
		"exit 1 when any check could not look at everything it needs (partial or not evaluated)")
	cmd.Flags().BoolVar(&fl.inspectImages, "inspect-images", false,
		"pull and inspect the images of DaemonSets that install binaries on hosts (contacts registries; results cached by digest)")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return runAudit(cmd.Context(), app, src, fl)
	}
	return cmd
}

func runAudit(ctx context.Context, app *App, src *sourceFlags, fl auditFlags) error {
	if fl.output != "text" && fl.output != "json" && fl.output != "html" {
		return withCode(ExitError, fmt.Errorf("unknown output format %q (want text, json or html)", fl.output))
	}
	failOn, err := finding.ParseSeverity(fl.failOn)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("--fail-on: %w", err))
	}
	target, err := parseTarget(fl.targetVersion)
	if err != nil {
		return withCode(ExitError, err)
	}
	selected, err := audit.Select(audit.ForTarget(checks.All(), target), fl.checks, fl.skipChecks)
	if err != nil {
		return withCode(ExitError, err)
	}
	snap, err := src.load(ctx, app, audit.Resources(selected), fl.quiet || fl.output == "json" && !app.ErrIsTerminal)
	if err != nil {
		return withCode(ExitError, err)
	}
	opts := audit.Options{Target: target}
	if fl.inspectImages {
		opts.Images = inspectHostImages(ctx, app, snap, fl.quiet)
	}
	rep := audit.Run(snap, selected, opts)
	switch fl.output {
	case "json":
		err = report.WriteJSON(app.Out, rep)
	case "html":
		err = writeHTMLReport(app.Out, rep)
	default:
		err = report.WriteText(app.Out, rep, report.TextOptions{
			Color:     app.OutIsTerminal && app.Getenv("NO_COLOR") == "",
			CaseTitle: caseTitle,
		})
	}
	if err != nil {
		return withCode(ExitError, fmt.Errorf("writing the report: %w", err))
	}
	if rep.AtOrAbove(failOn) {
		return withCode(ExitFindings, nil)
	}
	if fl.failOnUnknown && rep.Unknown() {
		return withCode(ExitFindings, errors.New("--fail-on-unknown: some checks could not look at everything they need (see COULD NOT LOOK)"))
	}
	return nil
}

// caseTitle looks a case up in the embedded library for citations.
func caseTitle(id string) string {
	lib, err := library.Default()
	if err != nil {
		return ""
	}
	if c, ok := lib.Case(id); ok {
		return c.Title
	}
	return ""
}

// progress prints what a live read is doing, on stderr, once the read has
// taken more than a moment, and only on a terminal.
type progress struct {
	mu      sync.Mutex // resources are read concurrently
	app     *App
	start   time.Time
	last    time.Time
	printed bool
}

func newProgress(app *App) *progress { return &progress{app: app, start: time.Now()} }

func (p *progress) update(res snapshot.Resource, n int, done bool) {
	if !p.app.ErrIsTerminal {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.start) < time.Second || (!done && now.Sub(p.last) < 200*time.Millisecond) {
		return
	}
	p.last = now
	p.printed = true
	state := "reading"
	if done {
		state = "read"
	}
	fmt.Fprintf(p.app.ErrOut, "\r\x1b[K%s %s: %d objects (%s)", state, res.Resource, n,
		now.Sub(p.start).Round(100*time.Millisecond))
}

// done ends the progress line, if one was printed.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.app.ErrOut, "\r\x1b[K")
	}
}

// parseTarget reads --target-version: "1.35", "v1.35" or "1.35.2".
func parseTarget(s string) (*check.KubeVersion, error) {
	if s == "" {
		return nil, nil
	}
	v, ok := check.ParseKubeVersion(s)
	if !ok || v.Major != 1 {
		return nil, fmt.Errorf("--target-version %q: want a Kubernetes version such as 1.35", s)
	}
	return &v, nil
}
