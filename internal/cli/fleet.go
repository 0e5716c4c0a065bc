package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// fleetFlags are audit's flags for many kubeconfig contexts in one run.
type fleetFlags struct {
	contexts      []string
	allContexts   bool
	maxConcurrent int
	outputDir     string
	summaryFormat string
}

// defaultMaxConcurrentContexts bounds how many clusters are read at once:
// each live read already keeps four LISTs in flight, and a laptop's
// memory holds a few large snapshots, not dozens.
const defaultMaxConcurrentContexts = 4

func addFleetFlags(cmd *cobra.Command, src *sourceFlags) *fleetFlags {
	ff := &fleetFlags{}
	f := cmd.Flags()
	f.StringSliceVar(&ff.contexts, "contexts", nil,
		"audit each of these kubeconfig contexts (comma-separated) and print a fleet summary; one context that cannot be audited does not stop the others")
	f.BoolVar(&ff.allContexts, "all-contexts", false, "audit every context of the kubeconfig, as --contexts does")
	f.IntVar(&ff.maxConcurrent, "max-concurrent-contexts", defaultMaxConcurrentContexts,
		"with --contexts/--all-contexts: how many clusters are read at the same time")
	f.StringVar(&ff.outputDir, "output-dir", "",
		"with --contexts/--all-contexts: write each context's report into this directory, one file per context in the -o format")
	f.StringVar(&ff.summaryFormat, "summary-format", "",
		"with --contexts/--all-contexts: the fleet summary's format, text, json, yaml or markdown (default: json, yaml or markdown when -o is one of them, else text)")
	_ = cmd.RegisterFlagCompletionFunc("summary-format", cobra.FixedCompletions(summaryFormats, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.MarkFlagDirname("output-dir")
	// --contexts completes its last comma-separated name from the
	// kubeconfig, keeping the names before it.
	_ = cmd.RegisterFlagCompletionFunc("contexts", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		raw, err := src.kube.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		done := ""
		if i := strings.LastIndex(toComplete, ","); i >= 0 {
			done = toComplete[:i+1]
		}
		var out []cobra.Completion
		for _, n := range slices.Sorted(maps.Keys(raw.Contexts)) {
			if !slices.Contains(strings.Split(done, ","), n) {
				out = append(out, done+n)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	})
	return ff
}

var summaryFormats = []string{"text", "json", "yaml", "markdown"}

// active reports whether the run audits a fleet.
func (ff *fleetFlags) active() bool { return len(ff.contexts) > 0 || ff.allContexts }

// FleetSummary is the result of auditing many contexts: one row per
// context. Its JSON form is a contract like the report's: change it only by
// adding fields.
type FleetSummary struct {
	APIVersion  string         `json:"apiVersion"`
	Kind        string         `json:"kind"`
	GeneratedAt time.Time      `json:"generatedAt"`
	Tool        report.Tool    `json:"tool"`
	FailOn      string         `json:"failOn"`
	Clusters    []FleetCluster `json:"clusters"`
	Totals      FleetTotals    `json:"totals"`
}

// FleetKind is the kind of the fleet summary.
const FleetKind = "FleetSummary"

// FleetCluster is how one context's audit went.
type FleetCluster struct {
	Context string `json:"context"`
	// Server is the API server URL the kubeconfig gives the context.
	Server string `json:"server,omitempty"`
	// ServerVersion is the API server's gitVersion, as the audit read it.
	ServerVersion string `json:"serverVersion,omitempty"`
	// Status is "audited" (a report was made: see its checks for what it
	// could not read) or "error" (no report: Error says why).
	Status string `json:"status"`
	// ExitCode is what 'kubegap audit --context' would have exited with.
	ExitCode int    `json:"exitCode"`
	Error    string `json:"error,omitempty"`
	// Note is what the audit said beside its exit code (--fail-on-unknown).
	Note     string         `json:"note,omitempty"`
	Findings report.Summary `json:"findings"`
	Checks   FleetChecks    `json:"checks"`
	// ReadErrors lists the resources the audit needed but could not read
	// (forbidden or error): the checks that need them are partial.
	ReadErrors []FleetReadError `json:"readErrors,omitempty"`
	// Report is the file the context's report was written to
	// (--output-dir), relative to the working directory as given.
	Report string `json:"report,omitempty"`
}

// FleetChecks counts a context's checks by status.
type FleetChecks struct {
	Fail         int `json:"fail"`
	Pass         int `json:"pass"`
	Partial      int `json:"partial"`
	NotEvaluated int `json:"notEvaluated"`
}

// FleetReadError is one resource a context's audit could not read.
type FleetReadError struct {
	Resource string `json:"resource"`
	Status   string `json:"status"`
	Message  string `json:"message,omitempty"`
}

// FleetTotals adds up the fleet.
type FleetTotals struct {
	Contexts int            `json:"contexts"`
	Audited  int            `json:"audited"`
	Errors   int            `json:"errors"`
	Findings report.Summary `json:"findings"`
	// ExitCode is the run's exit code: the worst of the contexts'.
	ExitCode int `json:"exitCode"`
}

// fleetRun is one context to audit.
type fleetRun struct {
	context string
	server  string
	file    string
}

// runFleet audits each context as 'kubegap audit --context NAME' would,
// a few at a time, and prints the fleet summary. Flags are checked once,
// before any cluster is contacted or any file written.
func runFleet(ctx context.Context, app *App, src *sourceFlags, fl auditFlags, ff *fleetFlags) error {
	runs, summaryFormat, err := planFleet(src, fl, ff)
	if err != nil {
		return withCode(ExitError, err)
	}
	if ff.outputDir != "" {
		if err := os.MkdirAll(ff.outputDir, 0o755); err != nil {
			return withCode(ExitError, fmt.Errorf("--output-dir: %w", err))
		}
	}
	errOut := &lockedWriter{w: app.ErrOut}
	results := make([]FleetCluster, len(runs))
	sem := make(chan struct{}, ff.maxConcurrent)
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			defer func() { <-sem }()
			results[i] = auditContext(ctx, app, errOut, src, fl, r)
			if ctx.Err() == nil {
				reportContextDone(errOut, fl.quiet, results[i])
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	sum := FleetSummary{
		APIVersion: report.APIVersion, Kind: FleetKind,
		GeneratedAt: app.Now().UTC().Truncate(time.Second),
		Tool:        report.Tool{Name: "kubegap", Version: buildVersion()},
		FailOn:      fl.failOn,
		Clusters:    results,
	}
	sum.Totals = fleetTotals(results)
	if err := writeReport(app, fl.outputFile, func(w io.Writer) error {
		return writeFleetSummary(w, &sum, summaryFormat)
	}); err != nil {
		return withCode(ExitError, err)
	}
	if sum.Totals.ExitCode != ExitOK {
		return withCode(sum.Totals.ExitCode, nil)
	}
	return nil
}

// planFleet checks the flags and lists the contexts to audit, with the file
// each report goes to.
func planFleet(src *sourceFlags, fl auditFlags, ff *fleetFlags) ([]fleetRun, string, error) {
	switch {
	case len(ff.contexts) > 0 && ff.allContexts:
		return nil, "", errors.New("--contexts and --all-contexts cannot be combined")
	case src.demo || len(src.from) > 0:
		return nil, "", errors.New("--contexts and --all-contexts audit live clusters: drop --from and --demo")
	case src.kube.Context != nil && *src.kube.Context != "":
		return nil, "", errors.New("--context names one context: with --contexts/--all-contexts, list it there")
	case src.kube.APIServer != nil && *src.kube.APIServer != "",
		src.kube.ClusterName != nil && *src.kube.ClusterName != "":
		return nil, "", errors.New("--server and --cluster would send every context to the same cluster: drop them with --contexts/--all-contexts")
	case ff.maxConcurrent < 1:
		return nil, "", fmt.Errorf("--max-concurrent-contexts %d: want 1 or more", ff.maxConcurrent)
	case fl.baseline != "":
		return nil, "", errors.New("--baseline is one cluster's previous report: audit that context alone with --context to compare")
	}
	if err := checkAuditFlags(fl); err != nil {
		return nil, "", err
	}
	summaryFormat := ff.summaryFormat
	if summaryFormat == "" {
		summaryFormat = "text"
		if slices.Contains(summaryFormats, fl.output) {
			summaryFormat = fl.output
		}
	}
	if !slices.Contains(summaryFormats, summaryFormat) {
		return nil, "", fmt.Errorf("--summary-format %q: want one of %s", summaryFormat, strings.Join(summaryFormats, ", "))
	}
	if err := src.validNamespace(); err != nil {
		return nil, "", err
	}
	raw, err := src.kube.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading kubeconfig: %w", err)
	}
	if len(raw.Contexts) == 0 {
		return nil, "", errors.New("the kubeconfig has no contexts (KUBECONFIG, --kubeconfig or ~/.kube/config): nothing to audit with --contexts/--all-contexts")
	}
	names := slices.Sorted(maps.Keys(raw.Contexts))
	if !ff.allContexts {
		names = nil
		for _, n := range ff.contexts {
			n = strings.TrimSpace(n)
			if n == "" {
				return nil, "", errors.New("--contexts: an empty context name")
			}
			if _, ok := raw.Contexts[n]; !ok {
				return nil, "", fmt.Errorf("--contexts: context %q is not in the kubeconfig; its contexts are %s", n, quotedNames(raw.Contexts))
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	files := contextFileNames(names, reportExtension(fl.output))
	runs := make([]fleetRun, len(names))
	for i, n := range names {
		runs[i] = fleetRun{context: n}
		if c := raw.Clusters[raw.Contexts[n].Cluster]; c != nil {
			runs[i].server = c.Server
		}
		if ff.outputDir != "" {
			runs[i].file = filepath.Join(ff.outputDir, files[i])
		}
	}
	return runs, summaryFormat, nil
}

// checkAuditFlags refuses the flag values runAudit would refuse, once for
// the fleet rather than once per context after clusters were read.
func checkAuditFlags(fl auditFlags) error {
	if _, ok := outputs[fl.output]; !ok {
		return fmt.Errorf("unknown output format %q (want one of %s)", fl.output, outputList())
	}
	if _, _, err := parseFailOn(fl.failOn); err != nil {
		return err
	}
	if _, err := finding.ParseSeverity(fl.minSeverity); err != nil {
		return fmt.Errorf("--min-severity: %w", err)
	}
	switch fl.failOnUnknown {
	case "", failOnUnknownInput, failOnUnknownAll:
	default:
		return fmt.Errorf("--fail-on-unknown=%s: want input (the default of the bare flag) or all", fl.failOnUnknown)
	}
	if fl.failOnNew {
		return errors.New("--fail-on-new needs --baseline, which names one cluster's report: audit that context alone")
	}
	if _, err := compileSuppressions(fl.cfg); err != nil {
		return err
	}
	target, err := parseTarget(fl.targetVersion)
	if err != nil {
		return err
	}
	if _, err := audit.Choose(checks.All(), fl.checks, fl.skipChecks, target); err != nil {
		return err
	}
	if _, err := declaration(&sourceFlags{}, fl); err != nil {
		return err
	}
	return nil
}

// auditContext runs one context's audit as 'kubegap audit --context NAME'
// and sums it up. The report goes to its file, or nowhere.
func auditContext(ctx context.Context, app *App, errOut io.Writer, src *sourceFlags, fl auditFlags, r fleetRun) FleetCluster {
	one := *app
	one.Out, one.ErrOut = io.Discard, errOut
	one.OutIsTerminal, one.ErrIsTerminal, one.OutWidth = false, false, 0
	oneSrc := &sourceFlags{kube: configFlagsFor(src.kube, r.context)}
	fl.outputFile = r.file
	// Progress of several clusters at once would interleave; each context
	// prints one line when it is done instead.
	fl.quiet = true
	var rep *report.Report
	fl.onReport = func(r *report.Report) { rep = r }
	err := runAudit(ctx, &one, oneSrc, fl)
	out := FleetCluster{Context: r.context, Server: r.server, Status: "audited"}
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		out.ExitCode = ee.code
		if ee.err != nil {
			if ee.code == ExitError {
				out.Error = oneLine(ee.err.Error())
			} else {
				out.Note = oneLine(ee.err.Error())
			}
		}
	default:
		out.ExitCode, out.Error = ExitError, oneLine(err.Error())
	}
	// The row names the context; its error need not say it again.
	out.Error = strings.TrimPrefix(out.Error, fmt.Sprintf("context %q: ", r.context))
	if rep == nil {
		out.Status = "error"
		if out.Error == "" {
			out.Error = "the audit made no report"
		}
		out.ExitCode = ExitError
		return out
	}
	out.ServerVersion = rep.Source.ServerVersion
	out.Findings = rep.Summary
	for _, c := range rep.Checks {
		switch c.Status {
		case report.Fail:
			out.Checks.Fail++
		case report.Pass:
			out.Checks.Pass++
		case report.Partial:
			out.Checks.Partial++
		case report.NotEvaluated:
			out.Checks.NotEvaluated++
		}
	}
	for _, c := range rep.Coverage {
		if c.Status == snapshot.StatusError || c.Status == snapshot.StatusForbidden {
			out.ReadErrors = append(out.ReadErrors, FleetReadError{Resource: c.Resource, Status: string(c.Status), Message: oneLine(c.Message)})
		}
	}
	if out.Error == "" {
		out.Report = r.file
	} else {
		// The report was made but not written (--output-dir failed).
		out.Status = "error"
	}
	return out
}

// configFlagsFor copies kubectl's flags with the context set: each context
// needs its own loader, since ConfigFlags caches the first one it builds.
// The copies share the parsed values, which nothing changes after parsing.
func configFlagsFor(base *genericclioptions.ConfigFlags, contextName string) *genericclioptions.ConfigFlags {
	return &genericclioptions.ConfigFlags{
		CacheDir: base.CacheDir, KubeConfig: base.KubeConfig,
		ClusterName: base.ClusterName, AuthInfoName: base.AuthInfoName, Context: &contextName,
		Namespace: base.Namespace, APIServer: base.APIServer, TLSServerName: base.TLSServerName,
		Insecure: base.Insecure, CertFile: base.CertFile, KeyFile: base.KeyFile, CAFile: base.CAFile,
		BearerToken: base.BearerToken, Impersonate: base.Impersonate, ImpersonateUID: base.ImpersonateUID,
		ImpersonateGroup: base.ImpersonateGroup, ImpersonateUserExtra: base.ImpersonateUserExtra,
		Username: base.Username, Password: base.Password, Timeout: base.Timeout,
		DisableCompression: base.DisableCompression, ProxyURL: base.ProxyURL,
	}
}

// reportContextDone prints one line on stderr per context: an error always,
// the outcome unless -q.
func reportContextDone(w io.Writer, quiet bool, c FleetCluster) {
	if c.Status == "error" {
		fmt.Fprintf(w, "kubegap: could not audit context %q: %s\n", c.Context, c.Error)
		return
	}
	if quiet {
		return
	}
	fmt.Fprintf(w, "kubegap: context %q: audited, %s, %s partial or not evaluated, exit %d\n",
		c.Context, findingCounts(c.Findings), report.Plural(c.Checks.Partial+c.Checks.NotEvaluated, "check", "checks"), c.ExitCode)
}

func findingCounts(s report.Summary) string {
	n := s.Critical + s.High + s.Medium + s.Low + s.Info
	if n == 0 {
		return "no findings"
	}
	var parts []string
	for _, sev := range []finding.Severity{finding.Critical, finding.High, finding.Medium, finding.Low, finding.Info} {
		if c := s.Count(sev); c > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c, sev))
		}
	}
	return report.Plural(n, "finding", "findings") + " (" + strings.Join(parts, ", ") + ")"
}

// fleetTotals adds the contexts up. The exit code is the worst context's:
// 2 when any could not be audited, else 1 when any would exit 1, else 0.
func fleetTotals(cs []FleetCluster) FleetTotals {
	t := FleetTotals{Contexts: len(cs)}
	for _, c := range cs {
		if c.Status == "error" {
			t.Errors++
		} else {
			t.Audited++
		}
		t.Findings.Add(c.Findings)
		t.ExitCode = max(t.ExitCode, c.ExitCode)
	}
	return t
}

// reportExtensions name each -o format's file in --output-dir; a format
// not listed is named by itself.
var reportExtensions = map[string]string{
	"text": ".txt", "summary": ".txt", "json": ".json", "yaml": ".yaml", "sarif": ".sarif",
	"junit": ".xml", "markdown": ".md", "html": ".html",
	"policyreport": ".yaml", "openreports": ".yaml", "prometheus": ".prom",
}

func reportExtension(format string) string {
	if ext, ok := reportExtensions[format]; ok {
		return ext
	}
	return "." + format
}

// maxContextFileStem bounds a file name made from a context name: names
// such as EKS ARNs are long, and file systems allow 255 bytes.
const maxContextFileStem = 120

// contextFileNames names one file per context, safely on any file system:
// characters other than letters, digits, '.', '_' and '-' become '_', a
// leading '.' too (no hidden files, no "..", no path separators). A name
// that had to change, or that would collide with another's on a
// case-insensitive file system, gets 8 hex digits of its SHA-256, so two
// contexts never share a file; the summary says which file is whose.
func contextFileNames(names []string, ext string) []string {
	stems := make([]string, len(names))
	seen := map[string]int{}
	for i, n := range names {
		stems[i] = safeStem(n)
		seen[strings.ToLower(stems[i])]++
	}
	out := make([]string, len(names))
	for i, n := range names {
		s := stems[i]
		if s != n || seen[strings.ToLower(s)] > 1 {
			sum := sha256.Sum256([]byte(n))
			s += "-" + hex.EncodeToString(sum[:4])
		}
		out[i] = s + ext
	}
	return out
}

func safeStem(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		case r == '.' && i > 0:
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= maxContextFileStem {
			break
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}

// lockedWriter lets concurrent audits share stderr a line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func writeFleetSummary(w io.Writer, s *FleetSummary, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(s)
	case "yaml":
		b, err := yaml.Marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "markdown":
		return writeFleetMarkdown(w, s)
	}
	return writeFleetText(w, s)
}

// fleetHeader is the one-line account of the run.
func fleetHeader(s *FleetSummary) string {
	line := fmt.Sprintf("%s audited", report.Plural(s.Totals.Audited, "context", "contexts"))
	if s.Totals.Errors > 0 {
		line += fmt.Sprintf(", %d could not be audited", s.Totals.Errors)
	}
	return line + fmt.Sprintf("; %s; exit %d (the worst context's, --fail-on %s)", findingCounts(s.Totals.Findings), s.Totals.ExitCode, s.FailOn)
}

// dash stands for a count a context without a report does not have.
func fleetRow(c FleetCluster) []string {
	if c.Status == "error" {
		return []string{c.Context, orDash(c.ServerVersion), "-", "-", "-", "-", "-", "-", "-", "-", "-", fmt.Sprint(c.ExitCode), "error"}
	}
	return []string{c.Context, orDash(c.ServerVersion),
		fmt.Sprint(c.Findings.Critical), fmt.Sprint(c.Findings.High), fmt.Sprint(c.Findings.Medium), fmt.Sprint(c.Findings.Low), fmt.Sprint(c.Findings.Info),
		fmt.Sprint(c.Checks.Fail), fmt.Sprint(c.Checks.Pass), fmt.Sprint(c.Checks.Partial + c.Checks.NotEvaluated),
		fmt.Sprint(len(c.ReadErrors)), fmt.Sprint(c.ExitCode), orDash(c.Report)}
}

var fleetColumns = []string{"CONTEXT", "VERSION", "CRITICAL", "HIGH", "MEDIUM", "LOW", "INFO", "FAIL", "PASS", "PARTIAL", "READ-ERRORS", "EXIT", "REPORT"}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeFleetText(w io.Writer, s *FleetSummary) error {
	fmt.Fprintf(w, "kubegap fleet audit: %s\n\n", fleetHeader(s))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(fleetColumns, "\t"))
	for _, c := range s.Clusters {
		fmt.Fprintln(tw, strings.Join(fleetRow(c), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nPARTIAL counts checks partial or not evaluated; READ-ERRORS the resources that could not be read (forbidden or error).")
	writeFleetNotes(w, s, "")
	_, err := fmt.Fprintf(w, "\nkubegap %s, %s\n", s.Tool.Version, s.GeneratedAt.Format(time.RFC3339))
	return err
}

// writeFleetNotes lists, per context, why it could not be audited and what
// it could not read.
func writeFleetNotes(w io.Writer, s *FleetSummary, bullet string) {
	for _, c := range s.Clusters {
		if c.Error == "" && c.Note == "" && len(c.ReadErrors) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s%s:\n", bullet, c.Context)
		if c.Error != "" {
			fmt.Fprintf(w, "  %scould not audit: %s\n", bullet, c.Error)
		}
		if c.Note != "" {
			fmt.Fprintf(w, "  %s%s\n", bullet, c.Note)
		}
		for _, e := range c.ReadErrors {
			line := fmt.Sprintf("%s %s", e.Resource, e.Status)
			if e.Message != "" {
				line += ": " + e.Message
			}
			fmt.Fprintf(w, "  %s%s\n", bullet, line)
		}
	}
}

func writeFleetMarkdown(w io.Writer, s *FleetSummary) error {
	fmt.Fprintf(w, "# kubegap fleet audit\n\n%s.\n\n", fleetHeader(s))
	fmt.Fprintln(w, "| "+strings.Join(fleetColumns, " | ")+" |")
	fmt.Fprintln(w, "|"+strings.Repeat("---|", len(fleetColumns)))
	for _, c := range s.Clusters {
		row := fleetRow(c)
		for i := range row {
			row[i] = markdownCell(row[i])
		}
		fmt.Fprintln(w, "| "+strings.Join(row, " | ")+" |")
	}
	fmt.Fprintln(w, "\nPARTIAL counts checks partial or not evaluated; READ-ERRORS the resources that could not be read (forbidden or error).")
	writeFleetNotes(w, s, "- ")
	_, err := fmt.Fprintf(w, "\n_kubegap %s, %s_\n", s.Tool.Version, s.GeneratedAt.Format(time.RFC3339))
	return err
}

// markdownCell keeps a value inside its table cell.
func markdownCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
