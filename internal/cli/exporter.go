package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/metrics"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
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
--interval. Between audits only the report is kept, never the objects read.
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
		return e.run(cmd.Context())
	}
	return cmd
}

// exporter is one running `kubegap exporter`.
type exporter struct {
	app     *App
	src     *sourceFlags
	fl      auditFlags
	ex      exporterFlags
	cluster string // for --pushgateway
	set     *metrics.Set
	ln      net.Listener
	// sawSnapshot, in tests, sees each audit's snapshot before it is
	// dropped, to prove that nothing keeps it.
	sawSnapshot func(*snapshot.Snapshot)
	// audited, in tests, is told when each audit has ended.
	audited func(err error)
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
	return &exporter{app: app, src: src, fl: fl, ex: ex, cluster: cluster, set: set, ln: ln}, nil
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

// auditOnce runs one audit as `kubegap audit` would and keeps its report.
func (e *exporter) auditOnce(ctx context.Context) error {
	fl := e.fl
	var (
		encoded []byte
		took    time.Duration
	)
	fl.deliver = func(rep *report.Report, snap *snapshot.Snapshot, d time.Duration) error {
		if e.sawSnapshot != nil {
			e.sawSnapshot(snap)
		}
		// The report leaves as its JSON: the report built during the audit
		// sits in memory spans shared with the snapshot's objects, which
		// would stay mapped, mostly empty, for as long as it is kept.
		var err error
		encoded, err = json.Marshal(rep)
		took = d
		if err == nil {
			fmt.Fprintf(e.app.ErrOut, "kubegap exporter: audit done in %s: %s\n", d.Round(time.Millisecond), exporterFindingCounts(rep))
		}
		return err
	}
	err := runAudit(ctx, e.app, e.src, fl)
	// The snapshot and the audit's report are garbage now.
	runtime.GC()
	if err == nil {
		rep := new(report.Report)
		if err = json.Unmarshal(encoded, rep); err == nil {
			e.set.Succeeded(metrics.Audit{Report: rep, Duration: took, Finished: time.Now()})
		}
	}
	encoded = nil
	// Hand the read's memory back, so that between audits the process
	// holds the report, not the peak of the read.
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
	if e.fl.push.url != "" && (err == nil || e.set.Last() != nil) {
		// After a failure the gateway gets the last good metrics with the
		// error count; before any success there is nothing to replace the
		// group with.
		if perr := e.fl.push.push(ctx, e.set, e.cluster); perr != nil {
			fmt.Fprintf(e.app.ErrOut, "kubegap exporter: %s\n", oneLine(perr.Error()))
		}
	}
	return err
}

// exporterFindingCounts is "12 findings (1 critical, 3 high, ...)" for the log.
func exporterFindingCounts(rep *report.Report) string {
	s := report.Plural(len(rep.Findings), "finding", "findings")
	sum := rep.Summary
	return fmt.Sprintf("%s (%d critical, %d high, %d medium, %d low, %d info)", s, sum.Critical, sum.High, sum.Medium, sum.Low, sum.Info)
}
