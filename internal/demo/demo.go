// Package demo holds kubegap's embedded demo cluster: an AKS-like cluster
// caught mid-upgrade that carries the gaps of the four founding cases, so a
// new user sees real findings with no cluster at hand.
package demo

import (
	"embed"
	"fmt"
	"io/fs"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The demo's objects, and cluster/metrics.txt: what its API server would
// answer on GET /metrics, trimmed to the families checks read (single-object
// write latency, with apiserver_request_total that marks the file as the
// API server's, and a later family that shows the file is whole). The
// numbers are the demo's, invented: writes well inside the upstream 1s
// latency SLO. The shape (labels, their order, the histogram's buckets) is
// what kube-apiserver v1.37.2 printed on the test bed (test/e2e/writelatency
// logs it). No storage-size series: an AKS control plane's etcd quota is not
// visible, so a size would leave etcd-capacity-signals unknown; the demo's
// metrics stand for the families it shows, not for every one a server has.
//
//go:embed cluster/*.yaml cluster/metrics.txt
var files embed.FS

//go:embed images.yaml
var imagesData []byte

// ImageFacts is what --inspect-images would read from the demo's
// workload images (images.yaml), keyed by reference.
func ImageFacts() (map[string]check.ImageFacts, error) {
	var list []check.ImageFacts
	if err := yaml.UnmarshalStrict(imagesData, &list); err != nil {
		return nil, fmt.Errorf("demo images.yaml: %w", err)
	}
	out := make(map[string]check.ImageFacts, len(list))
	for _, f := range list {
		out[f.Image] = f
	}
	return out, nil
}

// ServerVersion is what the demo cluster's API server would report.
const ServerVersion = "v1.35.4"

// Snapshot loads the demo cluster through the same loader as --from.
func Snapshot() (*snapshot.Snapshot, error) {
	names, err := fs.Glob(files, "cluster/*.yaml")
	if err != nil {
		return nil, err
	}
	names = append(names, "cluster/"+snapshot.RecipeMetrics)
	s, err := snapshot.LoadFS(files, snapshot.Source{Type: snapshot.SourceDemo, Context: "contoso-prod (demo)"}, names)
	if err != nil {
		return nil, err
	}
	s.Source.ServerVersion = ServerVersion
	// The demo stands for a whole cluster read live: what it does not
	// hold does not exist, rather than "not in the input".
	for _, r := range snapshot.Known() {
		s.SetCoverage(r, snapshot.StatusRead, "")
		s.SetComplete(r, nil)
	}
	return s, nil
}
