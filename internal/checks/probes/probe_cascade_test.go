package probes

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestProbeCascadeGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, probeCascadeCheck(), checktest.Load(t, "gap.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	byCase := map[string][]finding.Finding{}
	for _, f := range fs {
		byCase[f.Title] = append(byCase[f.Title], f)
	}
	want := []struct {
		kind, ns, name string
		sev            finding.Severity
		title          string
	}{
		{"Deployment", "mdn", "web", finding.Medium, "2 workloads: liveness probes check a dependency"},
		{"DaemonSet", "ops", "agent", finding.Medium, "2 workloads: liveness probes check a dependency"},
		{"StatefulSet", "airflow", "scheduler", finding.Medium, "1 workload: exec probes run with the 1-second default timeout"},
		{"Deployment", "shop", "api", finding.Low, "2 workloads: liveness probes identical to readiness probes"},
		{"Deployment", "mdn", "web", finding.Low, "2 workloads: liveness probes identical to readiness probes"},
	}
	for _, w := range want {
		f := byCase[w.title]
		if len(f) != 1 || f[0].Severity != w.sev || !checktest.HasObject(f, w.kind, w.ns, w.name) {
			t.Errorf("want %q (%v) naming %s %s/%s; findings %+v", w.title, w.sev, w.kind, w.ns, w.name, fs)
		}
	}
	if len(fs) != 3 {
		t.Errorf("%d findings, want 3", len(fs))
	}
}

func TestProbeCascadeHealthyPasses(t *testing.T) {
	checktest.Quiet(t, probeCascadeCheck(), checktest.Complete(checktest.Load(t, "healthy.yaml")))
}
