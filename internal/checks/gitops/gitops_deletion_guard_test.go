package gitops

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Argo CD as in argo-cd issue 18780 before the deletion: the controller's
// policy is the default (no key in argocd-cmd-params-cm), and both
// ApplicationSets' Applications carry the resources finalizer.
func TestGitopsDeletionGuardGap(t *testing.T) {
	const file = "gitops-deletion-guard/gap.yaml"
	fs, ctx, ok := checktest.Run(t, gitopsDeletionGuardCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 2 || !checktest.HasObject(fs, "ApplicationSet", "argocd", "coredns") || !checktest.HasObject(fs, "ApplicationSet", "argocd", "rbac") {
		t.Fatalf("want findings naming ApplicationSets argocd/coredns and argocd/rbac, got %+v", fs)
	}
	for _, f := range fs {
		if f.Severity != finding.Medium || f.Rule != guardRule || len(f.Cases) != 2 || f.Cases[0] != guardCase || f.Cases[1] != guardEtcdCase {
			t.Errorf("finding %s %s %v", f.Severity, f.Rule, f.Cases)
		}
		if !checktest.HasObject([]finding.Finding{f}, "Deployment", "argocd", "argocd-applicationset-controller") {
			t.Errorf("finding does not name the controller: %v", f.Objects)
		}
		if !strings.Contains(f.Message, "sync (the default)") || strings.Contains(f.Message, "does not apply") {
			t.Errorf("message %q", f.Message)
		}
	}
	ev := strings.Join(fs[0].Evidence, "\n")
	for _, want := range []string{"data[applicationsetcontroller.policy] absent", resourcesFinalizer, "us-west1-vos1-coredns"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes on complete input: %v", ctx.Notes())
	}
	checktest.EvidenceTrue(t, fs, file)
}

// The reporter's fix: policy create-update in argocd-cmd-params-cm.
func TestGitopsDeletionGuardClean(t *testing.T) {
	checktest.Quiet(t, gitopsDeletionGuardCheck(), checktest.Complete(checktest.Load(t, "gitops-deletion-guard/clean.yaml")))
}

// applicationsSync create-update on an ApplicationSet is ignored unless the
// controller allows an override: still flagged, and the message says so.
func TestGitopsDeletionGuardIgnoredOverride(t *testing.T) {
	const file = "gitops-deletion-guard/ignored-override.yaml"
	fs, _, _ := checktest.Run(t, gitopsDeletionGuardCheck(), checktest.Complete(checktest.Load(t, file)))
	if len(fs) != 2 {
		t.Fatalf("want 2 findings, got %+v", fs)
	}
	if !strings.Contains(fs[0].Message, "applicationsSync create-update does not apply") {
		t.Errorf("message does not say the ApplicationSet's policy is ignored: %q", fs[0].Message)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// With the override allowed, the ApplicationSets' create-update applies.
func TestGitopsDeletionGuardOverrideAllowed(t *testing.T) {
	checktest.Quiet(t, gitopsDeletionGuardCheck(), checktest.Complete(checktest.Load(t, "gitops-deletion-guard/override.yaml")))
}

// A controller that takes its policy from a ConfigMap kubegap does not
// read (another namespace) leaves the rule partial, never a pass.
func TestGitopsDeletionGuardUnreadConfigMap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gitops-deletion-guard/gap.yaml"))
	moveArgo(s, "gitops")
	fs, ctx, _ := checktest.Run(t, gitopsDeletionGuardCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings with the policy unknown: %v", fs)
	}
	if n, ok := ctx.Notes()[guardRule]; !ok || !strings.Contains(n.Reason, "gitops/argocd-cmd-params-cm") {
		t.Errorf("no partial note naming the unread ConfigMap: %v", ctx.Notes())
	}
}

// Without the controller's Deployment, its policy is unknown: partial.
func TestGitopsDeletionGuardNoController(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gitops-deletion-guard/gap.yaml"))
	s.Deployments = nil
	fs, ctx, _ := checktest.Run(t, gitopsDeletionGuardCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings without the controller: %v", fs)
	}
	if n, ok := ctx.Notes()[guardRule]; !ok || !strings.Contains(n.Reason, "argocd-applicationset-controller") {
		t.Errorf("no partial note about the controller: %v", ctx.Notes())
	}
}

// moveArgo puts every Argo CD object and the controller in namespace ns.
func moveArgo(s *snapshot.Snapshot, ns string) {
	for i := range s.Deployments {
		s.Deployments[i].Namespace = ns
	}
	for i := range s.ConfigMaps {
		s.ConfigMaps[i].Namespace = ns
	}
	for _, r := range []snapshot.Resource{snapshot.ArgoApplicationSets, snapshot.ArgoApplications} {
		for i := range s.Custom[r.APIVersion()+"/"+r.Kind] {
			s.Custom[r.APIVersion()+"/"+r.Kind][i].SetNamespace(ns)
		}
	}
}

// A policy taken from a Secret reaches the check, after the loader's trim,
// as a redacted value without its source: partial, not the default sync.
func TestGitopsDeletionGuardPolicyFromSecret(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gitops-deletion-guard/gap.yaml"))
	env := s.Deployments[0].Spec.Template.Spec.Containers[0].Env
	env[0].ValueFrom, env[0].Value = nil, snapshot.Redacted
	fs, ctx, _ := checktest.Run(t, gitopsDeletionGuardCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings with the policy unknown: %v", fs)
	}
	if n, ok := ctx.Notes()[guardRule]; !ok || !strings.Contains(n.Reason, "does not keep") {
		t.Errorf("no partial note about the unkept value: %v", ctx.Notes())
	}
}

// Argo CD v2.8.6 as in argo-cd issue 16284 before etcd turned read-only:
// the controller on its default policy and an ApplicationSet without
// preserveResourcesOnDeletion whose Applications carry the resources
// finalizer. One finding, citing the read-only etcd case too.
func TestGitopsDeletionGuardArgo286(t *testing.T) {
	const file = "gitops-deletion-guard/argocd-286-gap.yaml"
	fs, _, ok := checktest.Run(t, gitopsDeletionGuardCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || !checktest.HasObject(fs, "ApplicationSet", "argocd", "platform-services") {
		t.Fatalf("want one finding naming ApplicationSet argocd/platform-services, got %+v", fs)
	}
	f := fs[0]
	// The issue has the deletions follow the read-only etcd, not happen
	// during it (a read-only etcd takes no deletes).
	if !slices.Contains(f.Cases, guardEtcdCase) || !strings.Contains(f.Message, "sync (the default)") ||
		!strings.Contains(f.Message, "after etcd turned read-only") {
		t.Errorf("cases %v, message %q", f.Cases, f.Message)
	}
	ev := strings.Join(f.Evidence, "\n")
	for _, want := range []string{resourcesFinalizer, "cluster-01-platform-services", "cluster-02-platform-services"} {
		if !strings.Contains(ev, want) {
			t.Errorf("evidence lacks %q:\n%s", want, ev)
		}
	}
	checktest.EvidenceTrue(t, fs, file)
}
