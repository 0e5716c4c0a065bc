package dns

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const eksAddonDriftGap = "eks-addon-drift/gap.yaml"

// The Corefile edited with kubectl edit and the replicas with kubectl
// patch: one medium each, naming the manager; kube-controller-manager's
// status entry is not counted.
func TestEKSAddonDriftGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, eksAddonDriftCheck(), checktest.Complete(checktest.Load(t, eksAddonDriftGap)))
	if !ok || len(fs) != 2 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	for _, f := range fs {
		if f.Severity != finding.Medium || f.Cases[0] != caseEKSAddonDrift {
			t.Errorf("finding %+v", f)
		}
	}
	if !checktest.HasObject(fs, "ConfigMap", "kube-system", "coredns") || !checktest.HasObject(fs, "Deployment", "kube-system", "coredns") {
		t.Errorf("findings %+v", fs)
	}
	all := fs[0].Message + fs[1].Message
	if !strings.Contains(all, "data.Corefile (by kubectl-edit)") || !strings.Contains(all, "spec.replicas (by kubectl-patch)") ||
		strings.Contains(all, "kube-controller-manager") {
		t.Errorf("messages %q", all)
	}
	if n := checktest.EvidenceTrue(t, fs, eksAddonDriftGap); n != 2 {
		t.Errorf("%d evidence items resolved, want 2 (one per object)", n)
	}
}

// Changes through the add-on (every field the eks manager's), and a
// self-managed CoreDNS edited with kubectl: quiet.
func TestEKSAddonDriftClean(t *testing.T) {
	for _, file := range []string{"eks-addon-drift/clean.yaml", "eks-addon-drift/self-managed.yaml"} {
		fs, ctx, ok := checktest.Run(t, eksAddonDriftCheck(), checktest.Complete(checktest.Load(t, file)))
		if !ok || len(fs) != 0 || len(ctx.Notes()) != 0 {
			t.Errorf("%s: evaluated %v, findings %+v, notes %v", file, ok, fs, ctx.Notes())
		}
	}
}

// Read without managedFields (kubectl get's default): partial, never a pass.
func TestEKSAddonDriftNoManagedFields(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "eks-coredns-version/gap.yaml"))
	_, ctx, _ := checktest.Run(t, eksAddonDriftCheck(), s)
	if _, ok := ctx.Notes()[ruleCorednsEdits]; !ok {
		t.Error("objects without managedFields, but the rule is not noted partial")
	}
}
