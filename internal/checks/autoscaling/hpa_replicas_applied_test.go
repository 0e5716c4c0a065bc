package autoscaling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// An HPA (4 to 16) on a Deployment whose last-applied manifest sets
// replicas 2: one medium finding naming both, citing the case.
func TestHPAReplicasAppliedGap(t *testing.T) {
	const file = "hpa-replicas-applied/gap.yaml"
	fs, _, ok := checktest.Run(t, hpaReplicasAppliedCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1: %v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Rule != ruleReplicasApplied || len(f.Cases) != 1 || f.Cases[0] != caseReplicasApplied {
		t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
	}
	if !checktest.HasObject(fs, "HorizontalPodAutoscaler", "prod", "web") || !checktest.HasObject(fs, "Deployment", "prod", "web") {
		t.Errorf("objects %v", f.Objects)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{"last-applied-configuration spec.replicas 2", "spec.minReplicas", "4"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	// The sources show pods killed as each sync resets the count, not
	// that the HPA had scaled out for load: the message claims no more.
	if !strings.Contains(f.Message, "between 4 and 16") || !strings.Contains(f.Message, "pods it added are terminated") ||
		strings.Contains(f.Message, "under load") {
		t.Errorf("message %q", f.Message)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// The manifest without replicas: nothing to report.
func TestHPAReplicasAppliedClean(t *testing.T) {
	checktest.Quiet(t, hpaReplicasAppliedCheck(), checktest.Complete(checktest.Load(t, "hpa-replicas-applied/clean.yaml")))
}

// A partial read of the StatefulSets leaves the rule unjudged.
func TestHPAReplicasAppliedPartial(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "hpa-replicas-applied/clean.yaml"))
	s.SetComplete(snapshot.StatefulSets, []string{"prod"})
	fs, notes := checktest.RunNotes(t, hpaReplicasAppliedCheck(), s)
	if len(fs) != 0 || notes[ruleReplicasApplied].Reason == "" {
		t.Errorf("findings %v, notes %v: want none and the rule incomplete", fs, notes)
	}
}
