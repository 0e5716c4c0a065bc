package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubegap/kubegap/bench/loadgen"

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
		if p.UID.IsZero() {
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

// TestSynthStreamsWhatTheClientsetPathWrote: the streaming generator
// writes, resource by resource and object by object, the snapshot that
// synth wrote before it streamed (loadgen.Run into an in-memory fake
// clientset, then every list added to an in-memory snapshot), except for
// the UIDs, which the fake path numbered in creation order and the
// streaming path derives from kind, namespace and name. Old UIDs are
// mapped to new ones by the object they name before comparing.
func TestSynthStreamsWhatTheClientsetPathWrote(t *testing.T) {
	dir := t.TempDir()
	spec := loadgen.Spec{Nodes: 30, Pods: 900, Seed: 7}
	oldPath, newPath := filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json.gz")
	if err := writeViaClientset(spec, oldPath); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"--nodes", "30", "--pods", "900", "--seed", "7", "-o", newPath}); err != nil {
		t.Fatal(err)
	}
	oldDoc, newDoc := readSnapshotFile(t, oldPath), readSnapshotFile(t, newPath)
	if !reflect.DeepEqual(oldDoc.Coverage, newDoc.Coverage) {
		t.Errorf("coverage differs:\nold %v\nnew %v", oldDoc.Coverage, newDoc.Coverage)
	}
	// Old UID -> new UID, through the object that carries it.
	uids := map[string]string{}
	for key, o := range oldDoc.items {
		if n, ok := newDoc.items[key]; ok {
			uids[o.uid] = n.uid
		}
	}
	oldUID := regexp.MustCompile(`00000000-0000-4000-8000-[0-9]{12}`)
	if len(oldDoc.items) != len(newDoc.items) {
		t.Errorf("%d items in the old snapshot, %d in the streamed one", len(oldDoc.items), len(newDoc.items))
	}
	differ := 0
	for key, o := range oldDoc.items {
		n, ok := newDoc.items[key]
		if !ok {
			t.Errorf("%s is missing from the streamed snapshot", key)
			continue
		}
		want := oldUID.ReplaceAllStringFunc(o.raw, func(u string) string {
			if v, ok := uids[u]; ok {
				return v
			}
			return u
		})
		if want != n.raw {
			if differ++; differ <= 3 {
				t.Errorf("%s differs:\nold (UIDs mapped) %s\nnew              %s", key, want, n.raw)
			}
		}
	}
	if differ > 3 {
		t.Errorf("... %d objects differ in all", differ)
	}
	for _, k := range []string{"Pod", "Node", "Deployment", "ReplicaSet", "StatefulSet", "Event", "PodDisruptionBudget", "EndpointSlice"} {
		if oldDoc.kinds[k] == 0 {
			t.Errorf("no %s compared: the spec should generate some", k)
		}
	}
}

// writeViaClientset is how synth wrote snapshots before it streamed: the
// loader against a fake clientset (UIDs numbered in creation order, as an
// API server would give them), then every resource listed and added.
func writeViaClientset(spec loadgen.Spec, out string) error {
	cs := fake.NewSimpleClientset()
	var uids atomic.Int64
	cs.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if o, ok := a.(k8stesting.CreateAction).GetObject().(metav1.Object); ok && o.GetUID() == "" {
			o.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", uids.Add(1))))
		}
		return false, nil, nil
	})
	spec.Workers = 1 // creation order, and so the UIDs, fixed
	if _, err := loadgen.Run(context.Background(), cs, spec, io.Discard); err != nil {
		return err
	}
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceCluster, ServerVersion: "v1.37.2"})
	for _, r := range audit.Resources(checks.All()) {
		if r.NonResourceURL != "" { // as synthsnap: no deprecated-API client, nothing to keep
			s.SetCoverage(r, snapshot.StatusRead, "")
			continue
		}
		_, add, ok := snapshot.ListKind(r)
		if !ok {
			s.SetCoverage(r, snapshot.StatusNotServed, "")
			continue
		}
		list, err := cs.Tracker().List(r.GVR(), schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}, "")
		if err != nil {
			return err
		}
		if el, ok := list.(*corev1.EventList); ok {
			warn := el.Items[:0]
			for _, e := range el.Items {
				if e.Type == corev1.EventTypeWarning {
					warn = append(warn, e)
				}
			}
			el.Items = warn
		}
		add(s, list)
		s.SetCoverage(r, snapshot.StatusRead, "")
	}
	s.Finish()
	return s.SaveFile(out)
}

type snapshotItem struct{ raw, uid string }

type snapshotDoc struct {
	Coverage []snapshot.Coverage
	items    map[string]snapshotItem // by kind/namespace/name
	kinds    map[string]int
}

// readSnapshotFile decodes a snapshot file's head and items, each item
// kept as its JSON text.
func readSnapshotFile(t *testing.T, path string) snapshotDoc {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	var doc struct {
		Coverage []snapshot.Coverage `json:"coverage"`
		Items    []json.RawMessage   `json:"items"`
	}
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := snapshotDoc{Coverage: doc.Coverage, items: map[string]snapshotItem{}, kinds: map[string]int{}}
	for _, raw := range doc.Items {
		var o struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace, Name string
				UID             string `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &o); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			t.Fatal(err)
		}
		key := o.Kind + "/" + o.Metadata.Namespace + "/" + o.Metadata.Name
		if _, dup := out.items[key]; dup {
			t.Errorf("%s: %s twice", path, key)
		}
		out.items[key] = snapshotItem{raw: compact.String(), uid: o.Metadata.UID}
		out.kinds[o.Kind]++
	}
	return out
}
