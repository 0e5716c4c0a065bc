package checks

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// envoyFilterBench are the checks BenchmarkEnvoyFilterChecks times.
var envoyFilterBench = benchIDs("BenchmarkEnvoyFilterChecks", "envoyfilter-upgrade-hazards")

// BenchmarkEnvoyFilterChecks times envoyfilter-upgrade-hazards on 5,000
// nodes and 100,000 pods with 5,000 EnvoyFilters of four patches each,
// one in ten matching envoy.router by its deprecated name:
// go test -run NONE -bench EnvoyFilterChecks ./internal/checks/
func BenchmarkEnvoyFilterChecks(b *testing.B) {
	s := largeSnapshot()
	efs := make([]unstructured.Unstructured, 0, 5000)
	for i := range 5000 {
		router := "envoy.filters.http.router"
		if i%10 == 0 {
			router = "envoy.router"
		}
		var patches []any
		for range 4 {
			patches = append(patches, map[string]any{"applyTo": "HTTP_FILTER",
				"match": map[string]any{"context": "SIDECAR_INBOUND", "listener": map[string]any{"filterChain": map[string]any{
					"filter": map[string]any{"name": "envoy.filters.network.http_connection_manager", "subFilter": map[string]any{"name": router}}}}},
				"patch": map[string]any{"operation": "INSERT_BEFORE", "value": map[string]any{"name": "envoy.filters.http.lua"}}})
		}
		efs = append(efs, unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1alpha3", "kind": "EnvoyFilter",
			"metadata": map[string]any{"name": fmt.Sprintf("ef-%04d", i), "namespace": fmt.Sprintf("ns-%03d", i%200)},
			"spec":     map[string]any{"configPatches": patches}}})
	}
	s.AddCustom(snapshot.IstioEnvoyFilters, efs)
	s.SetComplete(snapshot.IstioEnvoyFilters, nil)
	timeChecksOn(b, s, envoyFilterBench)
}
