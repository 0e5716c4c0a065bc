package objects

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestAPIWriteLatencyGap: POST on jobs and pods with 15 % and 10 % of
// their writes over 1s is one medium finding naming both, worst first,
// quoting the series and the SLO; PATCH pods/status at 0.025 % and a
// LIST are not in it. With writes within the SLO the rule is evaluated
// and silent.
func TestAPIWriteLatencyGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-write-latency/gap"))
	fs, ctx, ok := checktest.Run(t, apiWriteLatencyCheck(), s)
	if !ok || len(fs) != 1 {
		t.Fatalf("findings %+v (evaluated %v)", fs, ok)
	}
	f := fs[0]
	if f.Severity != finding.Medium || !strings.HasPrefix(f.Title, "POST jobs.batch: 15.0% of single-object writes took over 1s") ||
		len(f.Cases) != 1 || f.Cases[0] != caseTroccoEKS {
		t.Errorf("finding %+v", f)
	}
	if !strings.Contains(f.Message, "2 verb and resource pairs (POST jobs.batch, POST pods)") || strings.Contains(f.Message, "status") {
		t.Errorf("message %q", f.Message)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{
		`apiserver_request_duration_seconds{group="batch",resource="jobs",scope="resource",subresource="",verb="POST",version="v1"} count 12000, le="1" 10200`,
		`apiserver_request_duration_seconds{group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} count 12000, le="1" 10800`,
		"https://github.com/kubernetes/community/blob/master/sig-scalability/slos/api_call_latency.md",
	} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if n := ctx.Notes()[ruleWriteSLO]; n.Reason != "" {
		t.Errorf("series known, yet %+v", n)
	}

	checktest.Quiet(t, apiWriteLatencyCheck(), checktest.Complete(checktest.Load(t, "api-write-latency/ok")))
}

// TestAPIWriteLatencyUnknown: a /metrics without the histogram, one with
// too few writes, and writes of custom or virtual resources only are
// unknown, never a pass.
func TestAPIWriteLatencyUnknown(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "api-write-latency/ok"))
	all := s.WriteLatency
	for _, tt := range []struct {
		name   string
		series []snapshot.WriteLatency
		want   string
	}{
		{"no series", nil, "holds no apiserver_request_duration_seconds series"},
		{"few writes", []snapshot.WriteLatency{{Verb: "POST", Version: "v1", Resource: "pods", Count: 999, Within1s: 500}}, "too few to judge"},
		{"custom and virtual only", []snapshot.WriteLatency{
			{Verb: "POST", Group: "example.com", Version: "v1", Resource: "widgets", Count: 5000, Within1s: 10},
			{Verb: "POST", Group: "authorization.k8s.io", Version: "v1", Resource: "subjectaccessreviews", Count: 5000, Within1s: 10},
		}, "too few to judge"},
	} {
		s.WriteLatency = tt.series
		fs, ctx, _ := checktest.Run(t, apiWriteLatencyCheck(), s)
		n := ctx.Notes()[ruleWriteSLO]
		if len(fs) != 0 || n.Kind != check.NeedsKnowledge || !strings.Contains(n.Reason, tt.want) {
			t.Errorf("%s: findings %+v, note %+v", tt.name, fs, n)
		}
	}
	s.WriteLatency = all
}

// TestAPIWriteLatencyManaged: the managed dumps' /metrics hold no
// request-duration series: partial, no finding.
func TestAPIWriteLatencyManaged(t *testing.T) {
	for _, p := range []string{"aks", "eks", "gke", "k3s", "kind"} {
		s := checktest.Load(t, "../../testdata/managed/"+p)
		fs, ctx, _ := checktest.Run(t, apiWriteLatencyCheck(), s)
		if len(fs) != 0 || ctx.Notes()[ruleWriteSLO].Kind != check.NeedsKnowledge {
			t.Errorf("%s: findings %+v, notes %+v", p, fs, ctx.Notes())
		}
	}
}
