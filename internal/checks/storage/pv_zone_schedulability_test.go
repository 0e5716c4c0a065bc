package storage

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func sevOf(fs []finding.Finding, kind, name string) finding.Severity {
	for _, f := range fs {
		if checktest.HasObject([]finding.Finding{f}, kind, "", name) || checktest.HasObject([]finding.Finding{f}, kind, "kube-system", name) {
			return f.Severity
		}
	}
	return -1
}

func TestPVZoneGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, pvZoneSchedulabilityCheck(), checktest.Complete(checktest.Load(t, "zone-gap.yaml")))
	if !ok {
		t.Fatal("not evaluated")
	}
	for _, w := range []struct {
		kind, name string
		sev        finding.Severity
	}{
		{"PersistentVolume", "pv-c", finding.High},
		{"PersistentVolume", "pv-a", finding.Medium},
		{"PersistentVolume", "pv-b", -1},
		{"StorageClass", "gp3", finding.Medium},
		{"CSIStorageCapacity", "csisc-n-a1", finding.Medium},
	} {
		if got := sevOf(fs, w.kind, w.name); got != w.sev {
			t.Errorf("%s %s: %v, want %v (findings %+v)", w.kind, w.name, got, w.sev, fs)
		}
	}
}

// A Karpenter NodePool allowed in zone c can replace the missing node.
func TestPVZoneKarpenterLowers(t *testing.T) {
	s := checktest.Load(t, "zone-gap.yaml")
	np := unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": map[string]any{"name": "general"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"requirements": []any{
			map[string]any{"key": "topology.kubernetes.io/zone", "operator": "In", "values": []any{"eu-west-1c"}}}}}}}}
	s.AddCustom(snapshot.KarpenterNodePools, []unstructured.Unstructured{np})
	fs, _, _ := checktest.Run(t, pvZoneSchedulabilityCheck(), checktest.Complete(s))
	if got := sevOf(fs, "PersistentVolume", "pv-c"); got != finding.Medium {
		t.Errorf("pv-c with a NodePool in its zone: %v, want medium", got)
	}
}

func TestPVZoneOpenWorld(t *testing.T) {
	fs, ctx, _ := checktest.Run(t, pvZoneSchedulabilityCheck(), checktest.Load(t, "zone-gap.yaml"))
	if sevOf(fs, "PersistentVolume", "pv-c") >= 0 {
		t.Error("concluded no node exists from files")
	}
	if _, ok := ctx.Notes()[ruleNoNode]; !ok {
		t.Error("no incomplete note")
	}
}

func TestPVZoneHealthyPasses(t *testing.T) {
	checktest.Quiet(t, pvZoneSchedulabilityCheck(), checktest.Complete(checktest.Load(t, "zone-ok.yaml")))
}
