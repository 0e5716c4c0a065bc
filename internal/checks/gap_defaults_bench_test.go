package checks_test

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// storedVersionBenchChecks are the checks BenchmarkStoredVersionChecks times.
var storedVersionBenchChecks = checks.BenchIDs("BenchmarkStoredVersionChecks", "crd-stored-version-drift")

// BenchmarkStoredVersionChecks times crd-stored-version-drift on the
// 5,000-node, 100,000-pod snapshot with 500 CRDs, one in five still listing
// an unserved older version as stored (a cluster with many operators):
// go test -run NONE -bench StoredVersionChecks ./internal/checks/
func BenchmarkStoredVersionChecks(b *testing.B) {
	s := areaSnapshot()
	crds := make([]unstructured.Unstructured, 500)
	for i := range crds {
		stored := []any{"v1"}
		if i%5 == 0 {
			stored = []any{"v1beta1", "v1"}
		}
		crds[i] = unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
			"metadata": map[string]any{"name": fmt.Sprintf("widgets%03d.example.com", i)},
			"spec": map[string]any{"group": "example.com", "versions": []any{
				map[string]any{"name": "v1beta1", "served": false, "storage": false},
				map[string]any{"name": "v1", "served": true, "storage": true}}},
			"status": map[string]any{"storedVersions": stored},
		}}
	}
	s.AddCustom(snapshot.CustomResourceDefinitions, crds)
	for _, id := range storedVersionBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				if len(fs) != 1 || len(fs[0].Objects) != 100 {
					b.Fatalf("want one finding on 100 CRDs: %d findings", len(fs))
				}
			}
		})
	}
}
