package autoscaling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func evidenceOf(fs []finding.Finding, name string) (string, finding.Severity) {
	for _, f := range fs {
		if checktest.HasObject([]finding.Finding{f}, "HorizontalPodAutoscaler", "shop", name) {
			return strings.Join(f.Evidence, "\n"), f.Severity
		}
	}
	return "", -1
}

func TestHPAMetricSourceGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gap.yaml"))
	s.Source.ServerVersion = "v1.30.2"
	fs, _, ok := checktest.Run(t, hpaMetricSourceCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	for name, want := range map[string][]string{
		"web":   {"ScalingActive False", "without a cpu request: web"},
		"queue": {"no APIService serves external.metrics.k8s.io"},
		"rps":   {"v1beta1.custom.metrics.k8s.io reports Available False"},
		// No metrics: the API's default cpu Utilization target.
		"web-default": {"Resource cpu Utilization targets Deployment web; containers without a cpu request: web"},
	} {
		ev, sev := evidenceOf(fs, name)
		if name == "web-default" {
			if sev != finding.Medium {
				t.Errorf("%s: severity %v, want medium", name, sev)
			}
		} else if sev != finding.High {
			t.Errorf("%s: severity %v, want high; findings %+v", name, sev, fs)
		}
		for _, w := range want {
			if !strings.Contains(ev, w) {
				t.Errorf("%s: evidence %q lacks %q", name, ev, w)
			}
		}
	}
}

// Open world: an APIService that is not in files may exist.
func TestHPAMetricSourceOpenWorld(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, hpaMetricSourceCheck(), checktest.Load(t, "gap.yaml"))
	if ev, _ := evidenceOf(fs, "queue"); ev != "" {
		t.Errorf("concluded a missing APIService from files: %s", ev)
	}
	if _, ok := ctx.Notes()[ruleAPI]; !ok {
		t.Error("no incomplete note")
	}
}

func TestHPAMetricSourceOldControlPlane(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "healthy.yaml"))
	s.Source.ServerVersion = "v1.19.4"
	fs, _, _ := checktest.Run(t, hpaMetricSourceCheck(), s)
	ev, sev := evidenceOf(fs, "web")
	if sev != finding.Medium || !strings.Contains(ev, "1.16 to before 1.21") {
		t.Errorf("1.19 with a custom metric: %v %q", sev, ev)
	}
}

func TestHPAMetricSourceHealthyPasses(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "healthy.yaml"))
	s.Source.ServerVersion = "v1.30.2"
	checktest.Quiet(t, hpaMetricSourceCheck(), s)
}
