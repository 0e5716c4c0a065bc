package main

import (
	"path/filepath"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestSynthWritesALoadableSnapshot: the file loads like one kubegap
// snapshot wrote, with every resource a live audit reads, UIDs that tie
// pods to their controllers, and only Warning events (the live reader's
// field selector).
func TestSynthWritesALoadableSnapshot(t *testing.T) {
	out := filepath.Join(t.TempDir(), "snap.json.gz")
	if err := run([]string{"--nodes", "20", "--pods", "300", "-o", out}); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	if s.Source.Type != snapshot.SourceSnapshot || len(s.Nodes) != 20 || len(s.Pods) != 300 {
		t.Fatalf("source %s, %d nodes, %d pods; want a snapshot of 20 nodes and 300 pods", s.Source.Type, len(s.Nodes), len(s.Pods))
	}
	for _, r := range audit.Resources(checks.All()) {
		if st := s.Status(r).Status; st != snapshot.StatusRead && !r.Custom {
			t.Errorf("%s is %s, want read", r, st)
		}
	}
	ix := s.Index()
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.UID == "" {
			t.Fatalf("pod %s/%s has no UID", p.Namespace, p.Name)
		}
		for _, o := range p.OwnerReferences {
			if o.Controller != nil && *o.Controller && o.UID == "" {
				t.Fatalf("pod %s/%s: owner %s %s has no UID", p.Namespace, p.Name, o.Kind, o.Name)
			}
		}
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		if n := len(ix.PodsControlledBy(snapshot.IDOf(snapshot.DaemonSets.Kind, &d.ObjectMeta))); n != 20 {
			t.Errorf("DaemonSet %s owns %d pods, want one per node (20)", d.Name, n)
		}
	}
	if len(s.Events) == 0 {
		t.Error("no events; the generated cluster has Warning events for its broken pods")
	}
	for _, e := range s.Events {
		if e.Type != "Warning" {
			t.Fatalf("event %s/%s is %s; the live reader reads Warning events only", e.Namespace, e.Name, e.Type)
		}
	}
}

// TestSynthWritesAKubectlYAMLList: --yaml-list writes the objects of the
// snapshot as one kubectl-style List that loads to the same objects.
func TestSynthWritesAKubectlYAMLList(t *testing.T) {
	dir := t.TempDir()
	snap, list := filepath.Join(dir, "snap.json"), filepath.Join(dir, "dump.yaml")
	if err := run([]string{"--nodes", "10", "--pods", "120", "-o", snap, "--yaml-list", list}); err != nil {
		t.Fatal(err)
	}
	a, err := snapshot.LoadPaths([]string{snap})
	if err != nil {
		t.Fatal(err)
	}
	b, err := snapshot.LoadPaths([]string{list})
	if err != nil {
		t.Fatal(err)
	}
	if b.Source.Type != snapshot.SourceFiles {
		t.Errorf("the YAML List loads as %s, want files", b.Source.Type)
	}
	for _, r := range audit.Resources(checks.All()) {
		if a.Count(r) != b.Count(r) {
			t.Errorf("%s: %d objects in the snapshot, %d in the YAML List", r, a.Count(r), b.Count(r))
		}
	}
	if len(b.Pods) != 120 {
		t.Errorf("%d pods, want 120", len(b.Pods))
	}
}
