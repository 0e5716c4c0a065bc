package probes

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

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

// A probe of the address the pod itself listens on and the same endpoint
// with a longer liveness window are not cascades.
func TestProbeCascadeRealShapesQuiet(t *testing.T) {
	checktest.Quiet(t, probeCascadeCheck(), checktest.Complete(checktest.Load(t, "real-shapes.yaml")))
}

// The same shapes with the gap put back are flagged: the probe host is no
// longer an address the pod listens on, and the liveness window is no
// longer than readiness's.
func TestProbeCascadeRealShapesGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "real-shapes.yaml"))
	s.DaemonSets[0].Spec.Template.Spec.Containers[0].Args = []string{"-conf", "/etc/Corefile"}
	live := s.Deployments[0].Spec.Template.Spec.Containers[0].LivenessProbe
	live.PeriodSeconds, live.FailureThreshold = 5, 3
	fs, _, _ := checktest.Run(t, probeCascadeCheck(), s)
	titles := map[string]bool{}
	for _, f := range fs {
		titles[f.Title] = true
	}
	for _, want := range []string{"1 workload: liveness probes check a dependency", "1 workload: liveness probes identical to readiness probes"} {
		if !titles[want] {
			t.Errorf("no %q; findings %v", want, titles)
		}
	}
}

func TestOwnAddresses(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-localip", "169.254.20.10,10.96.0.10"}, "169.254.20.10"},
		{[]string{"--listen-address=0.0.0.0:8080"}, "0.0.0.0"},
		{[]string{"--bind-address", "[fd00::1]:53"}, "fd00::1"},
		{[]string{"--upstream=10.0.0.10"}, ""},
	} {
		own := ownAddresses(&corev1.PodSpec{Containers: []corev1.Container{{Args: tc.args}}})
		if tc.want == "" && len(own) > 0 || tc.want != "" && !own[tc.want] {
			t.Errorf("%q: %v, want %q", tc.args, own, tc.want)
		}
	}
}
