package autoscaling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// KEDA 2.14.3 with a TriggerAuthentication on provider azure: one medium
// finding naming it and the operator, citing the case.
func TestKedaPodIdentityRemovalGap(t *testing.T) {
	const file = "keda-pod-identity-removal/gap.yaml"
	fs, _, ok := checktest.Run(t, kedaPodIdentityRemovalCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Rule != ruleKedaPodIdentity || len(f.Cases) != 1 || f.Cases[0] != caseKedaPodIdentity {
		t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
	}
	if !checktest.HasObject(fs, "TriggerAuthentication", "default", "service-worker-auth") ||
		!checktest.HasObject(fs, "Deployment", "keda", "keda-operator") {
		t.Errorf("objects %v", f.Objects)
	}
	if checktest.HasObject(fs, "Deployment", "keda", "keda-operator-metrics-apiserver") {
		t.Errorf("the metrics server is not the operator: %v", f.Objects)
	}
	// A Helm-installed operator moves only with a KEDA upgrade; the cluster
	// upgrade brings 2.15 only on AKS's managed add-on.
	if !strings.Contains(f.Message, "the next KEDA upgrade (on AKS's managed add-on, the cluster's move to 1.31)") {
		t.Errorf("message does not tie the cluster upgrade to the AKS add-on: %q", f.Message)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"spec.podIdentity.provider", "azure", "ghcr.io/kedacore/keda:2.14.3", "Kubernetes 1.31"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	checktest.EvidenceTrue(t, fs, file)
}

// The operator already at 2.15.0: high.
func TestKedaPodIdentityRemovalRemoved(t *testing.T) {
	const file = "keda-pod-identity-removal/removed.yaml"
	fs, _, _ := checktest.Run(t, kedaPodIdentityRemovalCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 1 || fs[0].Severity != finding.High || !strings.Contains(fs[0].Title, "no longer supports") {
		t.Fatalf("want one high finding, got %+v", fs)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// Workload identity instead: nothing to report, every rule judged.
func TestKedaPodIdentityRemovalClean(t *testing.T) {
	checktest.Quiet(t, kedaPodIdentityRemovalCheck(), checktest.Complete(checktest.Load(t, "keda-pod-identity-removal/clean.yaml")))
}

// No operator among Deployments read in one namespace only: the finding
// stays medium and the rule is marked incomplete; no authentications read
// at all: skipped.
func TestKedaPodIdentityRemovalPartial(t *testing.T) {
	s := checktest.Load(t, "keda-pod-identity-removal/gap.yaml")
	s.Deployments = nil
	s = checktest.Complete(s)
	s.SetComplete(snapshot.Deployments, []string{"default"})
	fs, notes := checktest.RunNotes(t, kedaPodIdentityRemovalCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Message, "unknown") {
		t.Fatalf("want one medium finding saying the release is unknown, got %+v", fs)
	}
	if n, ok := notes[ruleKedaPodIdentity]; !ok || n.Reason == "" {
		t.Errorf("rule not marked incomplete: %v", notes)
	}
	s = checktest.Without(checktest.Load(t, "keda-pod-identity-removal/gap.yaml"),
		snapshot.KedaTriggerAuthentications, snapshot.KedaClusterTriggerAuthentications)
	fs, notes = checktest.RunNotes(t, kedaPodIdentityRemovalCheck(), s)
	if len(fs) != 0 || !notes[ruleKedaPodIdentity].Skipped {
		t.Errorf("want skipped with no finding, got %v %v", fs, notes)
	}
}
