package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/web"
)

func newServeCommand(app *App) *cobra.Command {
	var addr, reportFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Browse the incident library, the checks and a report in a local web page",
		Long: `Serve the incident library, the check catalogue and an audit report as a
local, read-only web app. It needs no cluster and writes nothing: a report
uploaded from the browser is kept in memory only.

It listens on 127.0.0.1 unless --addr names another address (then it warns:
anyone who can reach that address can read the pages).`,
		Example: `  kubegap serve
  kubegap audit -o json > report.json && kubegap serve --report report.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := webOptions(reportFile)
			if err != nil {
				return withCode(ExitError, err)
			}
			srv, err := web.NewServer(opts)
			if err != nil {
				return withCode(ExitError, err)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return withCode(ExitError, fmt.Errorf("--addr: %w", err))
			}
			host, _, _ := net.SplitHostPort(ln.Addr().String())
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				srv.LoopbackOnly = false
				fmt.Fprintf(app.ErrOut, "kubegap: warning: serving on %s, which is not a loopback address: anyone who can reach it can read these pages and upload reports\n", ln.Addr())
			}
			fmt.Fprintf(app.ErrOut, "kubegap: serving the incident library on http://%s/cases (Ctrl-C stops)\n", ln.Addr())
			// Its pages link to themselves; reports written elsewhere can
			// link their cases here too.
			fmt.Fprintf(app.ErrOut, "kubegap: audit reports link their cases here with --case-base-url http://%s/cases/ (or %s)\n", ln.Addr(), caseURLEnv)
			return serve(cmd.Context(), ln, srv)
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "address to listen on (host:port); a non-loopback host is served with a warning")
	cmd.Flags().StringVar(&reportFile, "report", "", "JSON report (kubegap audit -o json) to show on /report; default: the demo cluster's")
	return cmd
}

func serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return withCode(ExitError, err)
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return withCode(ExitError, err)
		}
		return nil
	}
}

// webOptions loads what the web pages show: the library, the checks and a
// report, from reportFile or else the demo cluster's audit.
func webOptions(reportFile string) (web.Options, error) {
	lib, err := library.Default()
	if err != nil {
		return web.Options{}, fmt.Errorf("loading the incident library: %w", err)
	}
	opts := web.Options{Library: lib, Checks: checks.All()}
	if reportFile != "" {
		f, err := os.Open(reportFile)
		if err != nil {
			return opts, fmt.Errorf("--report: %w", err)
		}
		defer f.Close()
		rep, err := web.ReadReport(f)
		if err != nil {
			return opts, fmt.Errorf("--report %s: %w", reportFile, err)
		}
		opts.Report, opts.ReportName = rep, reportFile
		return opts, nil
	}
	rep, err := demoReport()
	if err != nil {
		return opts, err
	}
	opts.Report, opts.ReportName = rep, "demo cluster"
	return opts, nil
}

func demoReport() (*report.Report, error) {
	snap, err := demo.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("loading the demo cluster: %w", err)
	}
	return audit.Run(snap, checks.All(), audit.Options{}), nil
}
