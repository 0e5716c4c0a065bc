// Package metrics turns audit reports into Prometheus metrics: the
// collectors behind `audit -o prometheus`, the exporter's /metrics and its
// pushes to a Pushgateway. It builds on client_golang's registry and
// prometheus/common's expfmt, never on hand-written exposition text.
//
// Labels stay few and bounded (check, severity, namespace, preflight
// phase, check status): a finding ID or an object name as a label would
// make one series per finding, and every fixed or renamed object a series
// that Prometheus keeps in its head block and index until retention ends
// it. The report names the objects; the metrics count them.
package metrics

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/common/expfmt"

	"github.com/kubegap/kubegap/internal/report"
)

// Metric names: the contract that dashboards, alerts and the tests read.
const (
	Findings           = "kubegap_findings"
	CheckStatus        = "kubegap_check_status"
	AuditDuration      = "kubegap_audit_duration_seconds"
	AuditLastSuccess   = "kubegap_audit_last_success_timestamp_seconds"
	AuditErrors        = "kubegap_audit_errors_total"
	BuildInfo          = "kubegap_build_info"
	PushJob            = "kubegap"
	ClusterGroupingKey = "cluster"
)

// Names lists every metric kubegap exports (its own, not the Go runtime's
// and process collectors the exporter adds).
func Names() []string {
	return []string{Findings, CheckStatus, AuditDuration, AuditLastSuccess, AuditErrors, BuildInfo}
}

// checkStatuses are the values of kubegap_check_status's status label: each
// check has a series for every one, 1 for its status and 0 for the others,
// so that a check leaving "fail" shows as a change, not a vanished series.
var checkStatuses = []report.Status{report.Fail, report.Pass, report.Partial, report.NotEvaluated}

var (
	findingsDesc = prometheus.NewDesc(Findings,
		"Findings of the last successful audit, by check, severity, namespace of the finding's first object (empty for a cluster-scoped one) and preflight phase (before or during an upgrade to --target-version; empty for the cluster as it is).",
		[]string{"check", "severity", "namespace", "preflight"}, nil)
	checkStatusDesc = prometheus.NewDesc(CheckStatus,
		"1 for the status each check had in the last successful audit (fail, pass, partial, not-evaluated), 0 for the other statuses.",
		[]string{"check", "status"}, nil)
	durationDesc = prometheus.NewDesc(AuditDuration,
		"How long the last successful audit took, reading the cluster included.",
		nil, nil)
	lastSuccessDesc = prometheus.NewDesc(AuditLastSuccess,
		"When the last successful audit finished, in seconds since the Unix epoch.",
		nil, nil)
)

// Build is what kubegap_build_info carries.
type Build struct {
	Version string
	// Revision is the VCS commit, if known.
	Revision string
}

// Audit is one successful audit: its report and what it took.
type Audit struct {
	Report   *report.Report
	Duration time.Duration
	Finished time.Time
}

// Set holds the metrics of the last good audit and the errors since the
// start. It is safe for concurrent use: scrapes read while audits write.
type Set struct {
	registry *prometheus.Registry
	errors   prometheus.Counter

	mu   sync.RWMutex
	last *Audit
}

// New returns a set with no audit yet: until Succeeded is called it
// exports only kubegap_build_info and kubegap_audit_errors_total.
func New(b Build) *Set {
	s := &Set{registry: prometheus.NewRegistry()}
	s.errors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: AuditErrors,
		Help: "Audits that failed since the process started; the other kubegap metrics keep describing the last successful audit.",
	})
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        BuildInfo,
		Help:        "Always 1; the labels name the kubegap build.",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": runtime.Version()},
	})
	build.Set(1)
	s.registry.MustRegister(s.errors, build, (*reportCollector)(s))
	return s
}

// Registry is where more collectors (the Go runtime's, the process's) go.
func (s *Set) Registry() *prometheus.Registry { return s.registry }

// Succeeded replaces the metrics with those of a finished audit. The set
// keeps the report, nothing the audit read.
func (s *Set) Succeeded(a Audit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = &a
}

// Failed counts a failed audit; the last good audit's metrics stay.
func (s *Set) Failed() { s.errors.Inc() }

// Last is the last successful audit, nil before the first.
func (s *Set) Last() *Audit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.last
}

// WriteText writes the set in the Prometheus text exposition format.
func (s *Set) WriteText(w io.Writer) error {
	families, err := s.registry.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range families {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	return nil
}

// Push replaces, on the Pushgateway at url, the group of job "kubegap"
// and the cluster's name with this set's metrics (HTTP PUT). The cluster
// is in the grouping key because a push replaces its whole group: without
// it, every cluster pushing to one gateway overwrites the last
// (derailed/popeye#232).
func (s *Set) Push(ctx context.Context, url, cluster string, client *http.Client) error {
	if cluster == "" {
		return fmt.Errorf("no cluster name for the grouping key")
	}
	p := push.New(url, PushJob).Grouping(ClusterGroupingKey, cluster).Gatherer(s.registry)
	if client != nil {
		p = p.Client(client)
	}
	return p.PushContext(ctx)
}

// reportCollector exports the last good audit of a Set.
type reportCollector Set

func (c *reportCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- findingsDesc
	ch <- checkStatusDesc
	ch <- durationDesc
	ch <- lastSuccessDesc
}

// findingKey is one kubegap_findings series.
type findingKey struct{ check, severity, namespace, preflight string }

func (c *reportCollector) Collect(ch chan<- prometheus.Metric) {
	last := (*Set)(c).Last()
	if last == nil {
		return
	}
	rep := last.Report
	counts := map[findingKey]int{}
	var order []findingKey
	for _, f := range rep.Findings {
		k := findingKey{check: f.Check, severity: f.Severity.String(), preflight: f.Preflight}
		if len(f.Objects) > 0 {
			k.namespace = f.Objects[0].Namespace
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		ch <- prometheus.MustNewConstMetric(findingsDesc, prometheus.GaugeValue, float64(counts[k]), k.check, k.severity, k.namespace, k.preflight)
	}
	for _, cr := range rep.Checks {
		for _, st := range checkStatuses {
			v := 0.0
			if cr.Status == st {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(checkStatusDesc, prometheus.GaugeValue, v, cr.ID, string(st))
		}
	}
	ch <- prometheus.MustNewConstMetric(durationDesc, prometheus.GaugeValue, last.Duration.Seconds())
	ch <- prometheus.MustNewConstMetric(lastSuccessDesc, prometheus.GaugeValue, float64(last.Finished.UnixNano())/1e9)
}
