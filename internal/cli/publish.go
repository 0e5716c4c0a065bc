package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/publish"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/policyreport"
)

func newPublishCommand(app *App) *cobra.Command {
	var from, format, failOn string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "publish --from report.json",
		Short: "Write a JSON report into the cluster as PolicyReports or OpenReports, replacing the last run's",
		Long: `Publish reads a kubegap JSON report (audit -o json) and writes it into the cluster
as the report objects policy engines write and Policy Reporter, RHACM and other
collectors read: with --format policyreport (the default) wgpolicyk8s.io/v1alpha2
PolicyReport "kubegap" in each namespace with findings and ClusterPolicyReport
"kubegap"; with --format openreports openreports.io/v1alpha1 Report and
ClusterReport. Each is server-side applied (field manager kubegap), so a new run
replaces the last; kubegap's reports (label app.kubernetes.io/managed-by=kubegap)
in namespaces that no longer have findings are deleted. A namespace the audit did
not read (-n) is left alone.

This is the one command of kubegap that writes, and only those objects: its
requests go through a transport that refuses anything but get, list, create,
update, patch and delete on the report resources of the chosen format before it
leaves the process. Run it with its own identity ('kubegap rbac --publisher'),
not the audit's read-only one. The CRDs must be installed (see docs/fleet.md).

Findings at or above --fail-on are "fail", those below it "warn"; checks that
could not look at everything are "skip" with the reason, checks that could not
run "error". The input is read and checked whole before any request: a file that
is not a kubegap JSON report, or is cut short, writes nothing (exit 2).`,
		Example: `  kubegap audit -o json --fail-on none --output-file report.json
  kubegap publish --from report.json --kubeconfig publisher.kubeconfig
  kubegap publish --from report.json --format openreports --fail-on medium`,
		Args: cobra.NoArgs,
	}
	kube := genericclioptions.NewConfigFlags(true)
	// The report says which namespaces to write; a -n of kubectl's would
	// be ignored, so publish has none.
	kube.Namespace = nil
	kube.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the kubegap JSON report to publish (audit -o json); - reads standard input")
	f.StringVar(&format, "format", string(policyreport.PolicyReport), "report API to write: policyreport (wgpolicyk8s.io/v1alpha2) or openreports (openreports.io/v1alpha1)")
	f.StringVar(&failOn, "fail-on", "high", "findings at or above this severity are results \"fail\", below it \"warn\": critical, high, medium, low, info, or none (all warn)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only the summary line, not each object written or deleted")
	_ = cmd.MarkFlagRequired("from")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		pf, err := policyreport.ParseFormat(format)
		if err != nil {
			return withCode(ExitError, fmt.Errorf("--format: %w", err))
		}
		sev, never, err := parseFailOn(failOn)
		if err != nil {
			return withCode(ExitError, err)
		}
		rep, err := readPublishInput(app, from)
		if err != nil {
			return withCode(ExitError, err)
		}
		objs, err := policyreport.Unstructured(rep, pf, policyreport.Options{FailOn: sev, NoFail: never, Area: checks.AreaOf})
		if err != nil {
			return withCode(ExitError, err)
		}
		src := &sourceFlags{kube: kube, instead: "run it in a pod with the publisher's token mounted"}
		cfg, _, err := src.restConfig()
		if err != nil {
			return withCode(ExitError, err)
		}
		client, err := dynamic.NewForConfig(publish.ReportsOnly(cfg, pf))
		if err != nil {
			return withCode(ExitError, err)
		}
		var log io.Writer = app.Out
		if quiet {
			log = nil
		}
		res, err := publish.Publish(cmd.Context(), client, objs, publish.Options{Format: pf, Scope: rep.Source.Scope.Namespaces, Log: log})
		if err != nil {
			return withCode(ExitError, fmt.Errorf("publish: %w (%s written, %s deleted before it)",
				err, report.Plural(res.Applied, "report", "reports"), report.Plural(res.Deleted, "report", "reports")))
		}
		skipped := ""
		if res.Skipped > 0 {
			skipped = fmt.Sprintf(", %s of namespaces deleted since the audit skipped", report.Plural(res.Skipped, "report", "reports"))
		}
		_, err = fmt.Fprintf(app.Out, "kubegap publish: %s written, %s deleted%s (%s)\n",
			report.Plural(res.Applied, "report", "reports"), report.Plural(res.Deleted, "stale report", "stale reports"), skipped, pf)
		return err
	}
	return cmd
}

// readPublishInput reads --from: a file, or standard input for -.
func readPublishInput(app *App, from string) (*report.Report, error) {
	if from == "-" {
		return publish.LoadReport(app.In, "standard input")
	}
	fh, err := os.Open(from)
	if err != nil {
		return nil, fmt.Errorf("--from: %w", err)
	}
	defer fh.Close()
	return publish.LoadReport(fh, from)
}
