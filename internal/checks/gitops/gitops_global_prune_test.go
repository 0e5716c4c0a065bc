package gitops

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

func TestFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

func TestGitopsGlobalPruneGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gitops-global-prune/gap.yaml"))
	fs, ctx, ok := checktest.Run(t, gitopsGlobalPruneCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || !checktest.HasObject(fs, "ApplicationSet", "argocd", "cells") {
		t.Fatalf("want one finding naming ApplicationSet argocd/cells, got %+v", fs)
	}
	f := fs[0]
	if f.Severity != finding.Medium || len(f.Cases) != 1 || f.Cases[0] != caseID {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	ev := strings.Join(f.Evidence, "\n")
	if !strings.Contains(ev, "deploy to 3 clusters") || !strings.Contains(ev, "ap-southeast-1a") {
		t.Errorf("evidence does not list the clusters: %v", f.Evidence)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes on complete input: %v", ctx.Notes())
	}
}

func TestGitopsGlobalPruneClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gitops-global-prune/clean.yaml"))
	checktest.Quiet(t, gitopsGlobalPruneCheck(), s)
}

// Without the Applications, how many clusters an ApplicationSet reaches is
// unknown: a partial note, never a pass.
func TestGitopsGlobalPruneWithoutApplications(t *testing.T) {
	s := checktest.Load(t, "gitops-global-prune/gap.yaml")
	s.Custom[snapshot.ArgoApplications.APIVersion()+"/"+snapshot.ArgoApplications.Kind] = nil
	fs, ctx, _ := checktest.Run(t, gitopsGlobalPruneCheck(), s)
	if len(fs) != 0 {
		t.Errorf("findings without Applications: %v", fs)
	}
	if n, ok := ctx.Notes()[rule]; !ok || !strings.Contains(n.Reason, "argocd/cells") {
		t.Errorf("no partial note naming argocd/cells: %v", ctx.Notes())
	}
}

// The loader keeps what the check reads and drops sources and status.
func TestArgoObjectsTrimmed(t *testing.T) {
	s := checktest.Load(t, "gitops-global-prune/gap.yaml")
	apps := s.CustomObjects(snapshot.ArgoApplications)
	if len(apps) != 9 {
		t.Fatalf("%d Applications", len(apps))
	}
	if _, ok := apps[0].Object["status"]; ok {
		t.Error("status kept")
	}
	spec := apps[0].Object["spec"].(map[string]any)
	if _, ok := spec["source"]; ok {
		t.Error("source kept")
	}
	if _, dest := destinationField(apps[0].Object); dest == "" || len(apps[0].GetOwnerReferences()) != 1 {
		t.Error("destination or owner dropped")
	}
}

// TestGitopsGlobalPruneEvidenceItems: the ApplicationSet's prune and
// strategy, and its Applications grouped by destination, are quoted as
// the fixture writes them and resolve against it.
func TestGitopsGlobalPruneEvidenceItems(t *testing.T) {
	fs, _, _ := checktest.Run(t, gitopsGlobalPruneCheck(), checktest.Complete(checktest.Load(t, "gitops-global-prune/gap.yaml")))
	if len(fs) != 1 {
		t.Fatalf("findings %+v", fs)
	}
	want := []string{
		"ApplicationSet/argocd/cells: spec.template.spec.syncPolicy.automated.prune=true, spec.strategy.type absent, spec.syncPolicy.applicationsSync absent",
		"Application/argocd/cells-0: spec.destination.server=https://eu-west-1a.cells.example.com",
		"Application/argocd/cells-1: spec.destination.server=https://eu-west-1b.cells.example.com",
		"Application/argocd/cells-2: spec.destination.server=https://ap-southeast-1a.cells.example.com",
	}
	var got []string
	for _, it := range fs[0].EvidenceItems {
		got = append(got, it.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("items\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if n := checktest.EvidenceTrue(t, fs, "gitops-global-prune/gap.yaml"); n != len(want) {
		t.Errorf("%d items resolved, want %d", n, len(want))
	}
}
