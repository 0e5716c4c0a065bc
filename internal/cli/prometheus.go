package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubegap/kubegap/internal/metrics"
	"github.com/kubegap/kubegap/internal/report"
)

// writePrometheus renders -o prometheus: the metrics of this one audit in
// the text exposition format, as the exporter serves them after it.
func writePrometheus(w io.Writer, rep *report.Report, rc renderContext) error {
	return auditMetrics(rep, rc.took).WriteText(w)
}

// auditMetrics is the metric set of one finished audit, as -o prometheus
// prints it and --pushgateway pushes it.
func auditMetrics(rep *report.Report, took time.Duration) *metrics.Set {
	set := metrics.New(metricsBuild())
	set.Succeeded(metrics.Audit{Report: rep, Duration: took, Finished: rep.GeneratedAt})
	return set
}

func metricsBuild() metrics.Build {
	bi := readBuildInfo()
	return metrics.Build{Version: bi.Version, Revision: bi.Commit}
}

// pushFlags are --pushgateway and --cluster-name, on audit and exporter.
type pushFlags struct {
	url     string
	cluster string
}

func addPushFlags(f *pflag.FlagSet, p *pushFlags) {
	f.StringVar(&p.url, "pushgateway", "",
		"push the audit's metrics to this Prometheus Pushgateway (URL), replacing the group job=kubegap,cluster=NAME")
	f.StringVar(&p.cluster, "cluster-name", "",
		"the cluster's name in the Pushgateway grouping key (default: the kubeconfig context)")
}

// pushTimeout bounds one push: a gateway that does not answer must not
// hold an audit's exit, or the exporter's next audit, for ever.
const pushTimeout = 30 * time.Second

// clusterName is the grouping key's cluster: --cluster-name, else the
// kubeconfig context a live read uses. Files, the demo and an in-cluster
// read name no cluster, so there the flag is needed. Checked before the
// audit reads anything: a push that cannot be made is bad input.
func (p pushFlags) clusterName(src *sourceFlags) (string, error) {
	if p.url == "" {
		if p.cluster != "" {
			return "", errors.New("--cluster-name names the cluster for --pushgateway, which is not given")
		}
		return "", nil
	}
	if u, err := url.Parse(p.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("--pushgateway %q: want an http:// or https:// URL", p.url)
	}
	if p.cluster != "" {
		return p.cluster, nil
	}
	if src.demo || len(src.from) > 0 {
		return "", errors.New("--pushgateway needs --cluster-name with --demo or --from: no kubeconfig context names the cluster")
	}
	name := ""
	if src.kube.Context != nil {
		name = *src.kube.Context
	}
	if name == "" {
		if raw, err := src.kube.ToRawKubeConfigLoader().RawConfig(); err == nil {
			name = raw.CurrentContext
		}
	}
	if name == "" {
		return "", errors.New("--pushgateway needs --cluster-name: no kubeconfig context names this cluster (in a pod, give the cluster's name)")
	}
	return name, nil
}

// pushReport pushes one audit's metrics, when --pushgateway is given.
func (p pushFlags) pushReport(ctx context.Context, rep *report.Report, took time.Duration, cluster string) error {
	if p.url == "" {
		return nil
	}
	return p.push(ctx, auditMetrics(rep, took), cluster)
}

func (p pushFlags) push(ctx context.Context, set *metrics.Set, cluster string) error {
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	if err := set.Push(ctx, p.url, cluster, &http.Client{}); err != nil {
		return fmt.Errorf("--pushgateway %s: %w", p.url, err)
	}
	return nil
}
