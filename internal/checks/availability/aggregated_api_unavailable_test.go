package availability

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// testdata/aggregated-api-unavailable: gap.json has metrics-server's
// APIService Available False and namespace payments Terminating with
// NamespaceDeletionDiscoveryFailure True, as at Datadog. clean.json: the
// APIService available, payments Terminating with discovery working.

func TestAggregatedAPIGap(t *testing.T) {
	fs, ctx := run(t, aggregatedAPIUnavailableCheck(), "aggregated-api-unavailable/gap.json", true)
	expect(t, fs, []want{
		{"APIService", "", "v1beta1.metrics.k8s.io", "is unavailable", finding.High, caseDatadogOOM},
		{"Namespace", "", "payments", "held up by failed API discovery", finding.High, caseDatadogOOM},
	})
	if !checktest.HasObject(fs, "Service", "kube-system", "metrics-server") {
		t.Error("the APIService finding should name its backing Service")
	}
	for _, f := range fs {
		ev := strings.Join(f.Evidence, "\n")
		if f.Objects[0].Kind == "Namespace" && !strings.Contains(ev, "metrics.k8s.io/v1beta1") {
			t.Errorf("namespace evidence should carry the failing group: %s", ev)
		}
		if f.Objects[0].Kind == "APIService" && !strings.Contains(ev, "FailedDiscoveryCheck") {
			t.Errorf("APIService evidence should carry the reason: %s", ev)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestAggregatedAPIClean(t *testing.T) {
	checktest.Quiet(t, aggregatedAPIUnavailableCheck(), checktest.Complete(checktest.Load(t, "aggregated-api-unavailable/clean.json")))
}

// From files the objects present are still judged, but neither resource
// is complete: silence would be partial.
func TestAggregatedAPIFiles(t *testing.T) {
	fs, ctx := runOn(t, aggregatedAPIUnavailableCheck(), loadFiles(t, "aggregated-api-unavailable/gap.json"))
	if len(fs) != 2 {
		t.Errorf("gap files: %d findings, want 2", len(fs))
	}
	if ctx.Complete(snapshot.APIServices) || ctx.Complete(snapshot.Namespaces) {
		t.Error("files: complete")
	}
}
