package probes

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
)

// TestProbeCascadeEvidenceItems: each flagged container's probe fields
// are quoted from its workload as read in the gap fixture: the liveness
// command that calls a dependency, the exec command with its unset
// timeout, and both handlers and failure windows of identical probes.
func TestProbeCascadeEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, probeCascadeCheck(), checktest.Load(t, "gap.yaml"))
	want := map[string][]string{
		"liveness probes check a dependency": {
			`DaemonSet/ops/agent: spec.template.spec.containers[name=agent].livenessProbe.exec.command=["sh","-c","curl -fsS https://config.acme.io/ping"]`,
			`Deployment/mdn/web: spec.template.spec.containers[name=web].livenessProbe.exec.command=["sh","-c","mysqladmin ping -h mysql.mdn.svc -u probe"]`,
		},
		"exec probes run with the 1-second default timeout": {
			`StatefulSet/airflow/scheduler: spec.template.spec.containers[name=scheduler].livenessProbe.exec.command=["python","-c","import airflow.jobs; check()"], ` +
				`spec.template.spec.containers[name=scheduler].livenessProbe.timeoutSeconds absent`,
		},
		"liveness probes identical to readiness probes": {
			`Deployment/mdn/web: spec.template.spec.containers[name=web].livenessProbe.exec.command=["sh","-c","mysqladmin ping -h mysql.mdn.svc -u probe"], ` +
				`spec.template.spec.containers[name=web].livenessProbe.periodSeconds absent, spec.template.spec.containers[name=web].livenessProbe.failureThreshold absent, ` +
				`spec.template.spec.containers[name=web].readinessProbe.exec.command=["sh","-c","mysqladmin ping -h mysql.mdn.svc -u probe"], ` +
				`spec.template.spec.containers[name=web].readinessProbe.periodSeconds absent, spec.template.spec.containers[name=web].readinessProbe.failureThreshold absent`,
		},
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		for part, w := range want {
			if !strings.Contains(f.Title, part) {
				continue
			}
			delete(want, part)
			for _, l := range w {
				if !slices.Contains(got, l) {
					t.Errorf("%q: no item\n  %s\nin\n  %s", f.Title, l, strings.Join(got, "\n  "))
				}
			}
		}
	}
	for part := range want {
		t.Errorf("no finding %q", part)
	}
	if n := checktest.EvidenceTrue(t, fs, "gap.yaml"); n != 5 {
		t.Errorf("%d items resolved, want one per flagged container and rule (5)", n)
	}
}
