package autoscaling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// load reads a fixture as a whole-cluster read of a 1.26 control plane
// (the version is ours; the issue does not give it).
func load(t *testing.T, file string) *snapshot.Snapshot {
	t.Helper()
	s := checktest.Complete(checktest.Load(t, file))
	s.Source.ServerVersion = "v1.26.3"
	return s
}

// KEDA installed while the Datadog Cluster Agent keeps the external
// metrics APIService (kedacore/keda#4415): reported before any HPA exists.
func TestExternalMetricsOwnerGap(t *testing.T) {
	const gap = "external-metrics-owner/gap.yaml"
	fs, _, ok := checktest.Run(t, hpaMetricSourceCheck(), load(t, gap))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseKEDAOwner {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	if !checktest.HasObject(fs, "APIService", "", "v1beta1.external.metrics.k8s.io") ||
		!checktest.EvidenceHas(f, "spec.service infra-prod/datadog-cluster-agent-metrics-api") ||
		!checktest.EvidenceHas(f, "selects Deployment infra-prod/datadog-cluster-agent (image gcr.io/datadoghq/cluster-agent:7.43.0)") ||
		!checktest.EvidenceHas(f, "KEDA's metrics server: Deployment keda/keda-operator-metrics-apiserver") {
		t.Errorf("objects %v, evidence %v", f.Objects, f.Evidence)
	}
	if n := checktest.EvidenceTrue(t, fs, gap); n != 3 {
		t.Errorf("%d evidence items resolved, want 3", n)
	}
}

// With KEDA's own APIService the rule is quiet.
func TestExternalMetricsOwnerClean(t *testing.T) {
	checktest.Quiet(t, hpaMetricSourceCheck(), load(t, "external-metrics-owner/clean.yaml"))
}

// Without KEDA the adapter that serves the API is the only one: quiet.
func TestExternalMetricsOwnerNoKEDA(t *testing.T) {
	s := load(t, "external-metrics-owner/gap.yaml")
	var kept = s.Deployments[:0]
	for _, d := range s.Deployments {
		if d.Namespace != "keda" {
			kept = append(kept, d)
		}
	}
	s.Deployments = kept
	checktest.Quiet(t, hpaMetricSourceCheck(), s)
}

// Services not read: which pods back the APIService is unknown, and the
// rule says so instead of passing.
func TestExternalMetricsOwnerServicesUnknown(t *testing.T) {
	s := checktest.Without(load(t, "external-metrics-owner/gap.yaml"), snapshot.Services)
	fs, notes := checktest.RunNotes(t, hpaMetricSourceCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings without Services: %v", fs)
	}
	if n, ok := notes[ruleOwner]; !ok || !strings.Contains(n.Reason, "datadog-cluster-agent-metrics-api") {
		t.Errorf("want a note on %s, got %v", ruleOwner, notes)
	}
}
