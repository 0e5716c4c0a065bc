package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/baseline"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/cluster"
	"github.com/kubegap/kubegap/internal/config"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/internal/suppress"
)

// sourceFlags choose what an audit or snapshot reads: a live cluster through
// kubectl's flags, files, or the demo cluster.
type sourceFlags struct {
	kube          *genericclioptions.ConfigFlags
	allNamespaces bool
	from          []string
	demo          bool
	strict        bool
	// offline: the command has --from and --demo.
	offline bool
	// notes are what loading files skipped, for the report's warnings.
	notes []string
	// progress prints progress on stderr even when it is not a terminal
	// (--progress).
	progress bool
	// instead is what a command that reads no files suggests when no
	// cluster is configured (publish); empty for audit and snapshot.
	instead string
}

func newSourceFlags(cmd *cobra.Command, offline bool) *sourceFlags {
	f := &sourceFlags{kube: genericclioptions.NewConfigFlags(true), offline: offline}
	f.kube.AddFlags(cmd.Flags())
	registerKubeCompletions(cmd, f)
	cmd.Flags().BoolVar(&f.progress, "progress", false,
		"print what a live read is doing on stderr (contacting the server, discovering APIs, the lists) even when stderr is not a terminal; at a terminal it is always shown unless -q")
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false,
		"read every namespace (the default unless -n is given; accepted for kubectl habits)")
	if offline {
		cmd.Flags().StringArrayVar(&f.from, "from", nil,
			"read files or directories instead of a cluster: YAML or JSON, List objects, multi-document, gzip, kubegap snapshots; - reads standard input (repeatable)")
		cmd.Flags().BoolVar(&f.demo, "demo", false, "audit the embedded demo cluster, which shows the founding gaps")
	}
	return f
}

// load reads the snapshot the flags choose. Progress goes to stderr.
func (f *sourceFlags) load(ctx context.Context, app *App, resources []snapshot.Resource, quiet bool) (*snapshot.Snapshot, error) {
	tuneGC(app)
	if quiet && f.progress {
		return nil, errors.New("--progress and -q/--quiet cannot be combined")
	}
	if f.allNamespaces && f.namespace() != "" {
		return nil, errors.New("-A/--all-namespaces and -n/--namespace cannot be combined")
	}
	if err := f.validNamespace(); err != nil {
		return nil, err
	}
	var offline func() (*snapshot.Snapshot, error)
	switch {
	case f.demo && len(f.from) > 0:
		return nil, errors.New("--demo and --from cannot be combined")
	case f.demo:
		offline = demo.Snapshot
	case len(f.from) > 0:
		limitHeap(app)
		offline = func() (*snapshot.Snapshot, error) {
			w := &warnings{app: app}
			defer w.done()
			s, notes, err := snapshot.LoadPathsWith(f.from, snapshot.LoadOptions{Stdin: app.In, Strict: f.strict, Warn: w.print})
			f.notes = notes
			return s, err
		}
	}
	if offline != nil {
		s, err := untilCancelled(ctx, offline)
		// -n means the same offline as live: the audit sees only that
		// namespace's objects, and says so in its scope.
		if err == nil && f.namespace() != "" {
			err = s.Restrict([]string{f.namespace()})
		}
		return s, err
	}
	cfg, contextName, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	opts := cluster.Options{Namespace: f.namespace(), Context: contextName}
	if !quiet {
		p := newProgress(app)
		p.asked = f.progress
		opts.Progress, opts.Stage = p.update, p.stage
		defer p.done()
	}
	s, err := cluster.Collect(ctx, cfg, resources, opts)
	if err != nil && contextName != "" {
		return nil, fmt.Errorf("context %q: %w", contextName, err)
	}
	return s, err
}

// untilCancelled runs an offline load and returns early when ctx ends: a
// read of standard input (--from -) that never ends blocks in read(2),
// which no signal interrupts, so Ctrl-C and SIGTERM must not wait for it.
// The process exits right after, taking the blocked read with it.
func untilCancelled(ctx context.Context, load func() (*snapshot.Snapshot, error)) (*snapshot.Snapshot, error) {
	type result struct {
		s   *snapshot.Snapshot
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := load()
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *sourceFlags) namespace() string {
	if f.kube.Namespace == nil {
		return ""
	}
	return *f.kube.Namespace
}

type auditFlags struct {
	// onReport, when set, receives the report before it is written: the
	// fleet audit (--contexts) sums each context's report up.
	onReport func(*report.Report)

	output        string
	outputFile    string
	failOn        string
	failOnNew     bool
	minSeverity   string
	baseline      string
	config        string
	color         string
	checks        []string
	skipChecks    []string
	quiet         bool
	strict        bool
	inspectImages bool
	// cfg is the config file read, if any.
	cfg *config.File
	// cfgSettings are the config keys that set a value no flag gave;
	// flagChecks and flagSkipChecks the selection before the file's.
	cfgSettings                []string
	flagChecks, flagSkipChecks []string
	failOnUnknown              string
	targetVersion              string
	// explainCoverage prints each incomplete check's rules and reasons
	// after the coverage block (text and Markdown).
	explainCoverage bool
	// complete and completeKinds declare file input complete (--complete,
	// --complete-kinds).
	complete      bool
	completeKinds []string

	// ignoreProviderOwned leaves out the findings a managed provider owns
	// (--ignore-provider-owned).
	ignoreProviderOwned bool

	// caseURL is where case links point and caseURLFrom which setting
	// chose it (resolveCaseURL).
	caseURL, caseURLFrom string
	// push is --pushgateway and --cluster-name (prometheus.go).
	push pushFlags
}

// --fail-on-unknown values: the bare flag counts what the user can
// complete (input, permissions); =all counts opt-in sources and knowledge
// kubegap lacks too.
const (
	failOnUnknownInput = "input"
	failOnUnknownAll   = "all"
)

func newAuditCommand(app *App) *cobra.Command {
	var fl auditFlags
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Audit a cluster, files or the demo cluster for the gaps behind public incidents",
		Long: `Audit reads a cluster read-only (kubectl's flags pick the kubeconfig, context
and namespace), or files with --from, or the embedded demo cluster with --demo,
and reports each gap with its objects, evidence, fix and the incident cases
behind it.

Settings come from flags, then from the config file (--config, else
.kubegap.yaml in this directory or a parent, else
$XDG_CONFIG_HOME/kubegap/config.yaml).

Exit codes: 0 no finding at or above --fail-on, 1 at least one, 2 the audit
could not run, 130 interrupted.`,
		Example: `  kubegap audit --demo
  kubegap audit --context prod -o json
  kubectl get nodes,pods,daemonsets -A -o yaml | kubegap audit --from -
  kubegap audit --from manifests/ -o sarif --output-file kubegap.sarif
  kubegap audit --baseline last.json --fail-on-new --fail-on medium
  kubegap audit --contexts staging,prod -o json --output-dir reports`,
		Args: cobra.NoArgs,
	}
	src := newSourceFlags(cmd, true)
	fleet := addFleetFlags(cmd, src)
	f := cmd.Flags()
	f.StringVarP(&fl.output, "output", "o", "text", "output format: "+outputList())
	f.StringVar(&fl.outputFile, "output-file", "", "write the report to this file instead of standard output (written only when the audit ran)")
	f.StringVar(&fl.failOn, "fail-on", "high", "exit 1 when a finding is at or above this severity: critical, high, medium, low, info, or none")
	f.BoolVar(&fl.failOnNew, "fail-on-new", false, "with --baseline: exit 1 only for new findings at or above --fail-on")
	f.StringVar(&fl.minSeverity, "min-severity", "info", "report only findings at or above this severity")
	f.BoolVar(&fl.ignoreProviderOwned, "ignore-provider-owned", false,
		"leave out (and do not fail on) findings whose objects a managed provider owns and reconciles (AKS, EKS, GKE, k3s); without it they are shown, marked with their owner, and count toward --fail-on")
	f.StringVar(&fl.baseline, "baseline", "", "a previous JSON report: mark each finding new or unchanged and list the resolved ones")
	f.StringVar(&fl.config, "config", "", "config file (default: .kubegap.yaml here or in a parent, else $XDG_CONFIG_HOME/kubegap/config.yaml)")
	f.StringVar(&fl.color, "color", "auto", "colour: auto (on a terminal, unless NO_COLOR; FORCE_COLOR forces it), always or never")
	f.StringSliceVar(&fl.checks, "checks", nil, "run only these checks (comma-separated IDs; see 'kubegap checks list')")
	f.StringSliceVar(&fl.skipChecks, "skip-checks", nil, "skip these checks")
	f.BoolVarP(&fl.quiet, "quiet", "q", false, "print no progress on stderr")
	f.StringVar(&fl.targetVersion, "target-version", "",
		"upgrade preflight: also judge the cluster as it will be during and after an upgrade to this Kubernetes minor (e.g. 1.35)")
	f.StringVar(&fl.failOnUnknown, "fail-on-unknown", "",
		"exit 1 when a check could not look at everything it needs for want of input or permissions a user can add; "+
			"=all also for an opt-in source not requested (--inspect-images) or facts unknown to kubegap")
	f.Lookup("fail-on-unknown").NoOptDefVal = failOnUnknownInput
	f.BoolVar(&fl.explainCoverage, "explain-coverage", false,
		"text and Markdown: after the coverage summary, list every incomplete check's rules and why (-o json always carries them)")
	f.BoolVar(&fl.strict, "strict", false, "with --from: a file in a directory that is not Kubernetes objects (Kustomize, Helm, other YAML) is an error, not skipped")
	f.BoolVar(&fl.complete, "complete", false,
		"with --from: declare that the input holds every object, in every namespace, of each kind it holds (declared, not observed: the report says so)")
	f.StringSliceVar(&fl.completeKinds, "complete-kinds", nil,
		"with --from: declare these kinds complete in every namespace, as kubectl names them (nodes,pods,ds,deploy,rs); one the input holds none of is declared to have none")
	f.BoolVar(&fl.inspectImages, "inspect-images", false,
		"pull and inspect the images of DaemonSets that install binaries on hosts and, for the checks that need them, every workload image (contacts registries; results cached by digest)")
	f.StringVar(&fl.caseURL, "case-base-url", report.DefaultCaseURL,
		"where case links point: a base the case ID is appended to (a 'kubegap site' at https://HOST/cases/, 'kubegap serve' at http://HOST:PORT/cases/) or a URL with {id} for it; else "+caseURLEnv+", else the config's case-base-url")
	addPushFlags(f, &fl.push)
	registerAuditCompletions(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := applyConfig(cmd, app, &fl); err != nil {
			return withCode(ExitError, err)
		}
		if fleet.active() {
			return runFleet(cmd.Context(), app, src, fl, fleet)
		}
		if fleet.outputDir != "" {
			return withCode(ExitError, errors.New("--output-dir writes one report per context: use it with --contexts or --all-contexts (one report: --output-file)"))
		}
		return runAudit(cmd.Context(), app, src, fl)
	}
	return cmd
}

// parseFailOn reads --fail-on: a severity, or "none" (never exit 1).
func parseFailOn(s string) (sev finding.Severity, never bool, err error) {
	if s == "none" {
		return 0, true, nil
	}
	sev, err = finding.ParseSeverity(s)
	if err != nil {
		return 0, false, fmt.Errorf("--fail-on: %w (or none)", err)
	}
	return sev, false, nil
}

func runAudit(ctx context.Context, app *App, src *sourceFlags, fl auditFlags) error {
	// On the report's clock, so that -o prometheus of the same input is
	// the same (tests fix the clock).
	start := app.Now()
	out, ok := outputs[fl.output]
	if !ok {
		return withCode(ExitError, fmt.Errorf("unknown output format %q (want one of %s)", fl.output, outputList()))
	}
	failOn, never, err := parseFailOn(fl.failOn)
	if err != nil {
		return withCode(ExitError, err)
	}
	minSev, err := finding.ParseSeverity(fl.minSeverity)
	if err != nil {
		return withCode(ExitError, fmt.Errorf("--min-severity: %w", err))
	}
	switch fl.failOnUnknown {
	case "", failOnUnknownInput, failOnUnknownAll:
	default:
		return withCode(ExitError, fmt.Errorf("--fail-on-unknown=%s: want input (the default of the bare flag) or all", fl.failOnUnknown))
	}
	if fl.failOnNew && fl.baseline == "" {
		return withCode(ExitError, errors.New("--fail-on-new needs --baseline"))
	}
	colorOn, err := colorMode(app, fl.color)
	if err != nil {
		return withCode(ExitError, err)
	}
	rules, err := compileSuppressions(fl.cfg)
	if err != nil {
		return withCode(ExitError, err)
	}
	var prev []finding.Finding
	if fl.baseline != "" {
		if prev, err = baseline.Load(fl.baseline); err != nil {
			return withCode(ExitError, fmt.Errorf("--baseline: %w", err))
		}
	}
	target, err := parseTarget(fl.targetVersion)
	if err != nil {
		return withCode(ExitError, err)
	}
	selected, err := audit.Choose(checks.All(), fl.checks, fl.skipChecks, target)
	if err != nil {
		return withCode(ExitError, err)
	}
	declared, err := declaration(src, fl)
	if err != nil {
		return withCode(ExitError, err)
	}
	pushCluster, err := fl.push.clusterName(src)
	if err != nil {
		return withCode(ExitError, err)
	}
	src.strict = fl.strict
	resources := audit.Resources(selected)
	if src.namespace() != "" && !slices.Contains(resources, snapshot.Namespaces) {
		// Read Namespaces too, so that a misspelt -n is refused.
		resources = append(resources, snapshot.Namespaces)
	}
	snap, err := src.load(ctx, app, resources, fl.quiet)
	if err != nil {
		return withCode(ExitError, err)
	}
	if err := audit.CheckScope(snap); err != nil {
		return withCode(ExitError, err)
	}
	opts := audit.Options{Target: target, Declared: declared}
	if fl.inspectImages {
		opts.Images = inspectHostImages(ctx, app, snap, selected, fl.quiet)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rep := audit.Run(snap, selected, opts)
	rep.GeneratedAt = app.Now().UTC().Truncate(time.Second)
	rep.Tool = report.Tool{Name: "kubegap", Version: buildVersion()}
	rep.SetCaseURL(fl.caseURL, fl.caseURLFrom)
	rep.Warnings = append(rep.Warnings, src.notes...)
	suppress.Apply(rep, snap, rules, app.Now())
	rep.Source.Config = configUse(fl, selected, target, rep)
	rep.KeepAtOrAbove(minSev)
	// The IDs left out, so that a baseline written before findings carried
	// an owner does not call them resolved.
	ownedIDs := map[string]bool{}
	if fl.ignoreProviderOwned {
		for _, f := range rep.Findings {
			if f.Owner != nil {
				ownedIDs[f.ID] = true
			}
		}
		rep.DropProviderOwned()
	}
	if fl.baseline != "" {
		kept := prev[:0]
		for _, f := range prev {
			// What this run leaves out is not resolved either.
			if f.Severity >= minSev && !ownedIDs[f.ID] && (!fl.ignoreProviderOwned || f.Owner == nil) {
				kept = append(kept, f)
			}
		}
		baseline.Compare(rep, fl.baseline, kept)
	}
	if fl.onReport != nil {
		fl.onReport(rep)
	}
	if out.locations && len(src.from) > 0 {
		locate(rep, snapshot.Positions(src.from))
	}
	if err := writeReport(app, fl.outputFile, func(w io.Writer) error {
		return out.render(w, rep, renderContext{app: app, color: colorOn && fl.outputFile == "", width: app.width(), explainCoverage: fl.explainCoverage,
			whole: !app.OutIsTerminal || fl.outputFile != "", reportObjects: reportObjectOptions(failOn, never, snap), subject: findingSubjects(snap),
			took: app.Now().Sub(start)})
	}); err != nil {
		return withCode(ExitError, err)
	}
	if err := fl.push.pushReport(ctx, rep, app.Now().Sub(start), pushCluster); err != nil {
		return withCode(ExitError, err)
	}
	switch {
	case never:
	case fl.failOnNew && baseline.NewAtOrAbove(rep, failOn):
		return withCode(ExitFindings, nil)
	case !fl.failOnNew && rep.AtOrAbove(failOn):
		return withCode(ExitFindings, nil)
	}
	switch {
	case fl.failOnUnknown == failOnUnknownAll && rep.Unknown():
		return withCode(ExitFindings, errors.New("--fail-on-unknown=all: some checks could not look at everything they need (see COVERAGE)"))
	case fl.failOnUnknown == failOnUnknownInput:
		if open := rep.UnknownCompletable(); len(open) > 0 {
			return withCode(ExitFindings, fmt.Errorf("--fail-on-unknown: %s could not look at everything they need for want of input or permissions (see COVERAGE): %s",
				report.Plural(len(open), "check", "checks"), strings.Join(open, ", ")))
		}
	}
	return nil
}

// declaration reads --complete and --complete-kinds. They apply to files
// only: a live read and the demo observe their completeness.
func declaration(src *sourceFlags, fl auditFlags) (snapshot.Declaration, error) {
	d := snapshot.Declaration{All: fl.complete}
	if len(fl.completeKinds) > 0 {
		rs, err := snapshot.ParseKinds(fl.completeKinds)
		if err != nil {
			return d, fmt.Errorf("--complete-kinds: %w", err)
		}
		d.Resources = rs
	}
	if !d.Empty() && len(src.from) == 0 {
		return d, errors.New("--complete and --complete-kinds apply to --from files only (a live read and --demo observe what they hold)")
	}
	return d, nil
}

// parseTarget reads --target-version: "1.35", "v1.35" or "1.35.2", at
// most the newest minor kubegap's tables know (audit.ParseTarget).
func parseTarget(s string) (*check.KubeVersion, error) {
	return audit.ParseTarget("--target-version", s)
}

// locate adds the file and line of each finding's objects, where the input
// files hold them.
func locate(rep *report.Report, pos snapshot.PositionMap) {
	cwd, _ := os.Getwd()
	for k, p := range pos {
		// Code scanning resolves paths against the repository root, which
		// is where CI runs: relative to the working directory.
		if abs, err := filepath.Abs(p.File); err == nil && cwd != "" {
			if rel, err := filepath.Rel(cwd, abs); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				p.File = filepath.ToSlash(rel)
				pos[k] = p
			}
		}
	}
	for i := range rep.Findings {
		f := &rep.Findings[i]
		for _, o := range f.Objects {
			if p, ok := pos.Lookup(o.Kind, o.Namespace, o.Name); ok {
				f.Locations = append(f.Locations, finding.Location{Object: o, File: p.File, Line: p.Line})
			}
		}
	}
}

// writeReport renders to standard output, or to a file that appears only
// once the whole report is written: a failed write leaves no half report.
func writeReport(app *App, path string, render func(io.Writer) error) error {
	if path == "" || path == "-" {
		if err := render(app.Out); err != nil {
			return fmt.Errorf("writing the report: %w", err)
		}
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".kubegap-report-*")
	if err != nil {
		return outputFileError(path, err)
	}
	defer os.Remove(tmp.Name())
	if err := render(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return outputFileError(path, err)
	}
	return nil
}

// outputFileError names the path the user gave, not the temporary file
// the report is written to first.
func outputFileError(path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("--output-file %s: %w", path, err)
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

// progress prints what a live read is doing, on stderr: on a terminal,
// one line rewritten in place once the read has taken more than a moment;
// elsewhere (a CI log), a plain line every few seconds, so a long read
// never looks hung.
type progress struct {
	mu      sync.Mutex // resources are read concurrently
	app     *App
	start   time.Time
	last    time.Time
	printed bool
	// asked: --progress, so the stages print off a terminal too.
	asked bool
}

// progressEvery is how often progress prints off a terminal.
const progressEvery = 5 * time.Second

func newProgress(app *App) *progress {
	now := app.Now()
	return &progress{app: app, start: now, last: now}
}

func (p *progress) update(res snapshot.Resource, n int, done bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.app.Now()
	elapsed := now.Sub(p.start).Round(100 * time.Millisecond)
	state := "reading"
	if done {
		state = "read"
	}
	if !p.app.ErrIsTerminal {
		if now.Sub(p.last) < progressEvery {
			return
		}
		p.last = now
		fmt.Fprintf(p.app.ErrOut, "kubegap: %s %s: %s (%s)\n", state, res.Resource, report.Plural(n, "object", "objects"), elapsed)
		return
	}
	if now.Sub(p.start) < time.Second || (!done && now.Sub(p.last) < 200*time.Millisecond) {
		return
	}
	p.last = now
	p.printed = true
	fmt.Fprintf(p.app.ErrOut, "\r\x1b[K%s %s: %s (%s)", state, res.Resource, report.Plural(n, "object", "objects"), elapsed)
}

// stage prints what the read does before its lists start ("contacting
// https://HOST", "discovering APIs"), from the first request on: in place
// at a terminal, as a line of its own with --progress elsewhere, and not
// at all in a pipe or CI log that did not ask.
func (p *progress) stage(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.app.ErrIsTerminal:
		p.printed = true
		fmt.Fprintf(p.app.ErrOut, "\r\x1b[K%s", s)
	case p.asked:
		fmt.Fprintf(p.app.ErrOut, "kubegap: %s\n", s)
	}
}

// done ends the progress line, if one was printed.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.printed {
		fmt.Fprint(p.app.ErrOut, "\r\x1b[K")
	}
}
