package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/metrics"
	"github.com/kubegap/kubegap/internal/report"
)

// exporterFlags are the exporter's own flags; the audit's are in auditFlags.
type exporterFlags struct {
	interval time.Duration
	listen   string
	// holdReport (--bench-hold-report, hidden) serves a JSON report's
	// metrics and never audits: the benchmark's "the report alone", the
	// same binary and server holding only what an audit leaves behind.
	holdReport string
}

// Retries after a failed audit start at firstRetry and double up to the
// interval: a cluster that is briefly unreachable at start should not
// leave /readyz false for a whole --interval.
const firstRetry = time.Minute

// shutdownGrace is how long SIGTERM waits for scrapes in flight.
const shutdownGrace = 5 * time.Second

func newExporterCommand(app *App) *cobra.Command {
	return exporterCommand(app, func(ctx context.Context, e *exporter) error { return e.run(ctx) })
}

// exporterCommand is the exporter's command, handing the exporter its
// flags make to start: tests start it with their hooks set.
func exporterCommand(app *App, start func(context.Context, *exporter) error) *cobra.Command {
	var fl auditFlags
	var ex exporterFlags
	cmd := &cobra.Command{
		Use:   "exporter",
		Short: "Audit on a schedule and serve the results as Prometheus metrics",
		Long: `exporter audits the cluster (read-only, exactly as 'kubegap audit' does, with
the same flags for the kubeconfig or the pod's service account, namespace,
checks and --target-version) when it starts and then every --interval, and
serves the last successful audit's metrics on /metrics, /healthz (the
process is up) and /readyz (an audit has succeeded).

A failed audit adds one to kubegap_audit_errors_total and leaves the other
metrics, kubegap_audit_last_success_timestamp_seconds included, as the last
successful audit made them; it is retried after 1m, 2m, 4m, ... up to
--interval. Each audit runs as a child process ('kubegap audit -o json' with
the same flags), so the objects it reads never enter the exporter's memory:
between audits the exporter holds only the last report.
With --pushgateway the metrics are also pushed after every audit.
SIGTERM or Ctrl-C stops it gracefully (exit 0).`,
		Example: `  kubegap exporter --interval 6h --listen :9090
  kubegap exporter --context prod --checks host-binary-glibc --pushgateway http://pushgateway:9091`,
		Args: cobra.NoArgs,
	}
	src := newSourceFlags(cmd, true)
	f := cmd.Flags()
	f.DurationVar(&ex.interval, "interval", 6*time.Hour, "time from the start of one audit to the start of the next")
	f.StringVar(&ex.listen, "listen", ":9090", "address to serve /metrics, /healthz and /readyz on")
	f.StringVar(&fl.minSeverity, "min-severity", "info", "count only findings at or above this severity")
	f.BoolVar(&fl.ignoreProviderOwned, "ignore-provider-owned", false,
		"leave out findings whose objects a managed provider owns and reconciles (AKS, EKS, GKE, k3s)")
	f.StringVar(&fl.config, "config", "", "config file (default: .kubegap.yaml here or in a parent, else $XDG_CONFIG_HOME/kubegap/config.yaml)")
	f.StringSliceVar(&fl.checks, "checks", nil, "run only these checks (comma-separated IDs; see 'kubegap checks list')")
	f.StringSliceVar(&fl.skipChecks, "skip-checks", nil, "skip these checks")
	f.StringVar(&fl.targetVersion, "target-version", "",
		"upgrade preflight: also judge the cluster as it will be during and after an upgrade to this Kubernetes minor (e.g. 1.35)")
	f.BoolVar(&fl.strict, "strict", false, "with --from: a file in a directory that is not Kubernetes objects is an error, not skipped")
	f.BoolVar(&fl.inspectImages, "inspect-images", false,
		"pull and inspect the images of DaemonSets that install binaries on hosts and, for the checks that need them, every workload image (contacts registries; results cached by digest)")
	addPushFlags(f, &fl.push)
	f.StringVar(&ex.holdReport, "bench-hold-report", "", "serve the metrics of this JSON report and never audit (for bench/exporter.sh)")
	_ = f.MarkHidden("bench-hold-report")
	registerAuditCompletions(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		// The audit's other flags, as the exporter runs it: nothing is
		// rendered, nothing fails on findings, no progress is printed.
		fl.output, fl.failOn, fl.quiet, fl.color = "json", "none", true, "never"
		if err := applyConfig(cmd, app, &fl); err != nil {
			return withCode(ExitError, err)
		}
		// Not the config file's: nothing is rendered, nothing fails.
		fl.output, fl.failOn = "json", "none"
		fl.cfgSettings = slices.DeleteFunc(fl.cfgSettings, func(s string) bool { return s == "output" || s == "fail-on" })
		e, err := newExporter(app, src, fl, ex)
		if err != nil {
			return withCode(ExitError, err)
		}
		e.args = auditArgs(cmd.Flags())
		return start(cmd.Context(), e)
	}
	return cmd
}

// exporterOnlyFlags are the exporter's flags that are not the audit's: the
// schedule, the server, the push (the exporter pushes, never its child)
// and the benchmark's hold. TestExporterForwardsEveryAuditFlag keeps
// every other exporter flag one that 'kubegap audit' takes.
var exporterOnlyFlags = map[string]bool{
	"interval": true, "listen": true, "bench-hold-report": true,
	"pushgateway": true, "cluster-name": true, "help": true,
}

// auditArgs is the 'kubegap audit' command line for the audit flags
// describe: every flag given, in its long form, but the exporter's own,
// then the output the exporter reads. A config file is not read here: the
// child reads the same one, from the same --config or directory.
func auditArgs(flags *pflag.FlagSet) []string {
	args := []string{"audit"}
	flags.Visit(func(f *pflag.Flag) {
		if exporterOnlyFlags[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			// Repeated, so that a value holding a comma stays one value of
			// a --from (StringArray) and appends to a --checks (StringSlice).
			for _, v := range sv.GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
			return
		}
		args = append(args, "--"+f.Name+"="+f.Value.String())
	})
	return append(args, "--output=json", "--fail-on=none", "--quiet", "--color=never")
}

// exporter is one running `kubegap exporter`.
type exporter struct {
	app *App
	ex  exporterFlags
	// push and cluster are --pushgateway's: the exporter pushes, its
	// child audits do not.
	push    pushFlags
	cluster string
	set     *metrics.Set
	ln      net.Listener
	// args is the child's command line, without the program (auditArgs).
	args []string
	// runAudit runs it, writing the report to stdout and what it has to
	// say to stderr: execAudit, the running binary as a child process, but
	// in tests of this package (whose binary is the test binary).
	runAudit func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// audited, in tests, is told when each audit has ended.
	audited func(err error)
}

// execAudit runs args as a child process of the running binary. The child
// inherits the environment (KUBECONFIG, the pod's service account) but for
// the profiling variables, so that its profile does not overwrite the
// exporter's; cancelling ctx kills it.
func execAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding kubegap's own binary to run the audit: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "KUBEGAP_CPUPROFILE=") || strings.HasPrefix(kv, "KUBEGAP_MEMPROFILE=")
	})
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd.Run()
}

// newExporter checks the flags as the audit would, so that a mistake is
// one line and exit 2 at start rather than an error every --interval, and
// opens the listener.
func newExporter(app *App, src *sourceFlags, fl auditFlags, ex exporterFlags) (*exporter, error) {
	if ex.interval < time.Second {
		return nil, fmt.Errorf("--interval %s: want at least 1s", ex.interval)
	}
	if _, err := finding.ParseSeverity(fl.minSeverity); err != nil {
		return nil, fmt.Errorf("--min-severity: %w", err)
	}
	target, err := parseTarget(fl.targetVersion)
	if err != nil {
		return nil, err
	}
	if _, err := audit.Choose(checks.All(), fl.checks, fl.skipChecks, target); err != nil {
		return nil, err
	}
	if _, err := compileSuppressions(fl.cfg); err != nil {
		return nil, err
	}
	if src.allNamespaces && src.namespace() != "" {
		return nil, errors.New("-A/--all-namespaces and -n/--namespace cannot be combined")
	}
	if err := src.validNamespace(); err != nil {
		return nil, err
	}
	if src.progress {
		return nil, errors.New("--progress: the exporter's audits print no progress (their outcome is logged)")
	}
	cluster, err := fl.push.clusterName(src)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", ex.listen)
	if err != nil {
		return nil, fmt.Errorf("--listen %s: %w", ex.listen, err)
	}
	set := metrics.New(metricsBuild())
	set.Registry().MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return &exporter{app: app, ex: ex, push: fl.push, cluster: cluster, set: set, ln: ln, runAudit: execAudit}, nil
}

func (e *exporter) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(e.set.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if e.set.Last() == nil {
			http.Error(w, "no audit has succeeded yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// run serves until ctx ends, auditing at start and then on schedule.
func (e *exporter) run(ctx context.Context) error {
	srv := &http.Server{Handler: e.handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(e.ln) }()
	plan := "auditing every " + e.ex.interval.String()
	if e.ex.holdReport != "" {
		plan = "serving " + e.ex.holdReport + ", never auditing"
	}
	fmt.Fprintf(e.app.ErrOut, "kubegap exporter: serving /metrics, /healthz and /readyz on %s; %s\n", e.ln.Addr(), plan)

	if e.ex.holdReport != "" {
		if err := e.hold(); err != nil {
			srv.Close()
			return withCode(ExitError, err)
		}
		<-ctx.Done()
	}
	retry := firstRetry
	for ctx.Err() == nil {
		started := time.Now()
		err := e.auditOnce(ctx)
		if ctx.Err() != nil {
			break // stopped mid-audit
		}
		wait := e.ex.interval - time.Since(started)
		if err != nil {
			wait = min(retry, e.ex.interval)
			retry = min(2*retry, e.ex.interval)
		} else {
			retry = firstRetry
		}
		if e.audited != nil {
			e.audited(err)
		}
		select {
		case <-ctx.Done():
		case err := <-served:
			return fmt.Errorf("serving %s: %w", e.ln.Addr(), err)
		case <-time.After(max(wait, 0)):
		}
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stopping the server: %w", err)
	}
	fmt.Fprintln(e.app.ErrOut, "kubegap exporter: stopped")
	return nil
}

// hold serves the report in --bench-hold-report as if an audit had just
// made it.
func (e *exporter) hold() error {
	b, err := os.ReadFile(e.ex.holdReport)
	if err != nil {
		return err
	}
	rep := new(report.Report)
	if err := json.Unmarshal(b, rep); err != nil {
		return fmt.Errorf("--bench-hold-report %s: %w", e.ex.holdReport, err)
	}
	b = nil
	e.set.Succeeded(metrics.Audit{Report: rep, Finished: time.Now()})
	runtime.GC()
	debug.FreeOSMemory()
	return nil
}

// auditOnce runs one audit as a child process and keeps its report. The
// child, not the exporter, holds the objects read: the Go runtime keeps
// much of a heap's peak mapped after the objects die, so an in-process
// audit left the exporter holding more than the report between audits.
func (e *exporter) auditOnce(ctx context.Context) error {
	started := time.Now()
	rep, err := e.childAudit(ctx)
	took := time.Since(started)
	if err == nil {
		e.set.Succeeded(metrics.Audit{Report: rep, Duration: took, Finished: time.Now()})
		fmt.Fprintf(e.app.ErrOut, "kubegap exporter: audit done in %s: %s\n", took.Round(time.Millisecond), exporterFindingCounts(rep))
	}
	rep = nil
	// Hand the decode's memory back, so that between audits the process
	// holds the report and no more.
	runtime.GC()
	debug.FreeOSMemory()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		e.set.Failed()
		msg := "no audit has succeeded yet"
		if last := e.set.Last(); last != nil {
			msg = "the metrics are those of the audit that finished at " + last.Finished.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(e.app.ErrOut, "kubegap exporter: audit failed: %s; %s\n", oneLine(err.Error()), msg)
	}
	if e.push.url != "" && (err == nil || e.set.Last() != nil) {
		// After a failure the gateway gets the last good metrics with the
		// error count; before any success there is nothing to replace the
		// group with.
		if perr := e.push.push(ctx, e.set, e.cluster); perr != nil {
			fmt.Fprintf(e.app.ErrOut, "kubegap exporter: %s\n", oneLine(perr.Error()))
		}
	}
	return err
}

// childAudit runs the audit and decodes the report it prints. The child's
// other lines (warnings about the input) are passed on to the log; when it
// fails, its last line, the error, is the audit's error.
func (e *exporter) childAudit(ctx context.Context) (*report.Report, error) {
	var stdout, stderr bytes.Buffer
	runErr := e.runAudit(ctx, e.args, &stdout, &stderr)
	lines := strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n")
	if runErr != nil {
		if last := lines[len(lines)-1]; last != "" {
			for _, l := range lines[:len(lines)-1] {
				fmt.Fprintln(e.app.ErrOut, l)
			}
			return nil, errors.New(strings.TrimPrefix(last, "kubegap: "))
		}
		return nil, fmt.Errorf("the audit: %w", runErr)
	}
	if stderr.Len() > 0 {
		fmt.Fprintln(e.app.ErrOut, strings.Join(lines, "\n"))
	}
	rep := new(report.Report)
	if err := json.Unmarshal(stdout.Bytes(), rep); err != nil {
		return nil, fmt.Errorf("the audit's report (%d bytes) does not decode: %w", stdout.Len(), err)
	}
	return rep, nil
}

// exporterFindingCounts is "12 findings (1 critical, 3 high, ...)" for the log.
func exporterFindingCounts(rep *report.Report) string {
	s := report.Plural(len(rep.Findings), "finding", "findings")
	sum := rep.Summary
	return fmt.Sprintf("%s (%d critical, %d high, %d medium, %d low, %d info)", s, sum.Critical, sum.High, sum.Medium, sum.Low, sum.Info)
}
