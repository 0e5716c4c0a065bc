package probes

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func cpRun(t *testing.T, file string, complete bool) ([]finding.Finding, map[string]string) {
	t.Helper()
	s := checktest.Load(t, "control-plane-restarts/"+file)
	if complete {
		checktest.Complete(s)
	}
	fs, ctx, ok := checktest.Run(t, controlPlaneRestartsCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	notes := map[string]string{}
	for rule, n := range ctx.Notes() {
		notes[rule] = n.Reason
	}
	return fs, notes
}

func bySeverityAndTitle(fs []finding.Finding, sev finding.Severity, part string) *finding.Finding {
	for i := range fs {
		if fs[i].Severity == sev && strings.Contains(fs[i].Title, part) {
			return &fs[i]
		}
	}
	return nil
}

func TestControlPlaneRestartsGap(t *testing.T) {
	fs, notes := cpRun(t, "gap.yaml", true)
	if len(notes) != 0 {
		t.Errorf("notes %v on a complete read", notes)
	}
	for _, w := range []struct {
		sev         finding.Severity
		title, name string
	}{
		{finding.High, "etcd pod etcd-cp-0 has restarted 183 times", "etcd-cp-0"},
		{finding.High, "kube-apiserver pod kube-apiserver-cp-0 has restarted 183 times", "kube-apiserver-cp-0"},
		{finding.Medium, "checks liveness by running etcdctl", "etcd-cp-0"},
	} {
		f := bySeverityAndTitle(fs, w.sev, w.title)
		if f == nil {
			t.Errorf("no %v finding %q in %v", w.sev, w.title, fs)
			continue
		}
		if !checktest.HasObject([]finding.Finding{*f}, "Pod", "kube-system", w.name) || !slices.Contains(f.Cases, caseNRELabs) {
			t.Errorf("%q: objects %v, cases %v", w.title, f.Objects, f.Cases)
		}
	}
	if len(fs) != 3 {
		t.Errorf("%d findings, want 3", len(fs))
	}
	// The probe is described by its settings, never its command line.
	for _, f := range fs {
		for _, e := range f.Evidence {
			if strings.Contains(e, "healthcheck-client") {
				t.Errorf("evidence prints the probe command: %q", e)
			}
		}
	}
}

func TestControlPlaneRestartsClean(t *testing.T) {
	fs, notes := cpRun(t, "clean.yaml", true)
	if len(fs) != 0 || len(notes) != 0 {
		t.Errorf("findings %v, notes %v", fs, notes)
	}
}

// From plain files the findings stand, but nothing says the etcd pod is
// the only member: medium, and both rules partial.
func TestControlPlaneRestartsFilesArePartial(t *testing.T) {
	fs, notes := cpRun(t, "gap.yaml", false)
	if notes[ruleCPRestarts] == "" || notes[ruleEtcdLiveness] == "" {
		t.Errorf("notes %v, want both rules partial", notes)
	}
	if f := bySeverityAndTitle(fs, finding.Medium, "etcd pod etcd-cp-0 has restarted"); f == nil {
		t.Errorf("no medium restart finding from files: %v", fs)
	}
	if f := bySeverityAndTitle(fs, finding.Low, "checks liveness by running etcdctl"); f == nil {
		t.Errorf("no low probe finding from files: %v", fs)
	}
}

// A snapshot written before static pods' probes were kept shows etcd with
// no probe at all: unknown from a file, but from a live read it means
// there is none.
func TestControlPlaneRestartsProbelessEtcd(t *testing.T) {
	for _, live := range []bool{false, true} {
		s := checktest.Load(t, "control-plane-restarts/clean.yaml")
		checktest.Complete(s)
		if live {
			s.Source.Type = snapshot.SourceCluster
		}
		stripped := 0
		for i := range s.Pods {
			p := &s.Pods[i]
			if cpComponent(p) != "etcd" {
				continue
			}
			for j := range p.Spec.Containers {
				if p.Spec.Containers[j].LivenessProbe != nil {
					p.Spec.Containers[j].LivenessProbe = nil
					stripped++
				}
			}
		}
		if stripped == 0 {
			t.Fatal("the clean fixture's etcd has no liveness probe to strip")
		}
		fs, ctx, ok := checktest.Run(t, controlPlaneRestartsCheck(), s)
		if !ok || len(fs) != 0 {
			t.Fatalf("live %v: evaluated %v, findings %v", live, ok, fs)
		}
		_, partial := ctx.Notes()[ruleEtcdLiveness]
		if partial == live {
			t.Errorf("live %v: etcd-liveness-probe partial %v, want %v", live, partial, !live)
		}
	}
}

// TestControlPlaneRestartsEvidenceItems: the restart counts, the last
// termination and the liveness probes' settings are quoted as the fixture
// writes them and resolve against it. The etcd probe sets no
// periodSeconds: it is quoted absent, where the evidence used to say
// "periodSeconds 0" (the API server defaults it to 10).
func TestControlPlaneRestartsEvidenceItems(t *testing.T) {
	fs, _ := cpRun(t, "gap.yaml", true)
	const etcdProbe = "spec.containers[name=etcd].livenessProbe."
	want := map[string][]string{
		"etcd pod etcd-cp-0 has restarted 183 times": {
			"Pod/kube-system/etcd-cp-0: status.containerStatuses[name=etcd].restartCount=183, " +
				"status.containerStatuses[name=etcd].lastState.terminated.reason=Error, " +
				"status.containerStatuses[name=etcd].lastState.terminated.exitCode=137, " +
				"status.containerStatuses[name=etcd].lastState.terminated.finishedAt=2018-12-04T09:57:58Z",
			"Pod/kube-system/etcd-cp-0: " + etcdProbe + "timeoutSeconds=15, " + etcdProbe + "periodSeconds absent, " + etcdProbe + "failureThreshold=8",
		},
		"kube-apiserver pod kube-apiserver-cp-0 has restarted 183 times": {
			"Pod/kube-system/kube-apiserver-cp-0: status.containerStatuses[name=kube-apiserver].restartCount=183, " +
				"status.containerStatuses[name=kube-apiserver].lastState.terminated.reason=Error, " +
				"status.containerStatuses[name=kube-apiserver].lastState.terminated.exitCode=137, " +
				"status.containerStatuses[name=kube-apiserver].lastState.terminated.finishedAt=2018-12-04T09:57:58Z",
			"Pod/kube-system/kube-apiserver-cp-0: spec.containers[name=kube-apiserver].livenessProbe.httpGet.path=/livez, " +
				"spec.containers[name=kube-apiserver].livenessProbe.httpGet.port=6443, " +
				"spec.containers[name=kube-apiserver].livenessProbe.timeoutSeconds=15, " +
				"spec.containers[name=kube-apiserver].livenessProbe.periodSeconds=10, " +
				"spec.containers[name=kube-apiserver].livenessProbe.failureThreshold=8",
		},
		"etcd static pod etcd-cp-0 checks liveness by running etcdctl": {
			"Pod/kube-system/etcd-cp-0: metadata.annotations[kubernetes.io/config.mirror]=0123456789abcdef, " +
				"spec.containers[name=etcd].image=k8s.gcr.io/etcd:3.2.24, " +
				etcdProbe + "timeoutSeconds=15, " + etcdProbe + "periodSeconds absent, " + etcdProbe + "failureThreshold=8",
		},
	}
	if len(fs) != len(want) {
		t.Fatalf("%d findings, want %d", len(fs), len(want))
	}
	for _, f := range fs {
		var got []string
		for _, it := range f.EvidenceItems {
			got = append(got, it.String())
		}
		if w, ok := want[f.Title]; !ok || !slices.Equal(got, w) {
			t.Errorf("%q: items\n  %s\nwant\n  %s", f.Title, strings.Join(got, "\n  "), strings.Join(w, "\n  "))
		}
		for _, e := range f.Evidence {
			if strings.Contains(e, "periodSeconds 0") || strings.Contains(e, "periodSeconds=0") {
				t.Errorf("%q: evidence states a period the probe does not set: %q", f.Title, e)
			}
		}
	}
	if n := checktest.EvidenceTrue(t, fs, "control-plane-restarts/gap.yaml"); n != 5 {
		t.Errorf("%d items resolved, want 5", n)
	}
}

// Before NRE Labs' probe began to fail, nothing had restarted: the only
// finding is the etcdctl liveness probe on the single member (medium),
// the gap the outage came through.
func TestControlPlaneRestartsBeforeProbeFailures(t *testing.T) {
	fs, _ := cpRun(t, "before-probe-failures.yaml", true)
	if len(fs) != 1 {
		t.Fatalf("%d findings %v, want the liveness-probe finding only", len(fs), fs)
	}
	f := bySeverityAndTitle(fs, finding.Medium, "checks liveness by running etcdctl")
	if f == nil || !slices.Contains(f.Cases, caseNRELabs) {
		t.Errorf("want a medium etcdctl-probe finding citing %s, got %v", caseNRELabs, fs)
	}
}
