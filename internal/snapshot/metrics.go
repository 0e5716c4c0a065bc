package snapshot

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/kubegap/kubegap/internal/apimetrics"
)

// APIServerMetrics is the API server's GET /metrics, a non-resource URL:
// no objects, but an input like a resource, with coverage (read,
// forbidden, not in the input) and an RBAC rule (nonResourceURLs). Only
// the apiserver_requested_deprecated_apis series are kept.
var APIServerMetrics = Resource{Resource: "metrics", Kind: "APIServerMetrics", NonResourceURL: "/metrics"}

// RecipeMetrics is the recipe dump's file of `kubectl get --raw /metrics`.
const RecipeMetrics = "metrics.txt"

// DeprecatedAPIRequest is one series of apiserver_requested_deprecated_apis:
// some client requested this deprecated group/version/resource since the
// API server that answered started.
type DeprecatedAPIRequest struct {
	Group          string `json:"group"`
	Version        string `json:"version"`
	Resource       string `json:"resource"`
	Subresource    string `json:"subresource,omitempty"`
	RemovedRelease string `json:"removedRelease,omitempty"`
	// Value is the gauge's value as printed ("1").
	Value string `json:"value"`
	// From is where the series was read: "GET /metrics" live, or the
	// file's path. A snapshot keeps the original.
	From string `json:"from"`
}

// SeriesName is the series as the exposition names it:
// apiserver_requested_deprecated_apis{group="",removed_release="",...}.
// Evidence names the series by it.
func (d DeprecatedAPIRequest) SeriesName() string {
	return fmt.Sprintf(`%s{group=%q,removed_release=%q,resource=%q,subresource=%q,version=%q}`,
		apimetrics.DeprecatedAPIs, d.Group, d.RemovedRelease, d.Resource, d.Subresource, d.Version)
}

// ReadAPIServerMetrics reads a /metrics output into the deprecated-API
// series it holds, each marked as read from from.
func ReadAPIServerMetrics(r io.Reader, from string) ([]DeprecatedAPIRequest, error) {
	fams, err := apimetrics.Read(r, apimetrics.DeprecatedAPIs)
	if err != nil {
		return nil, err
	}
	var out []DeprecatedAPIRequest
	for _, s := range fams[apimetrics.DeprecatedAPIs] {
		out = append(out, DeprecatedAPIRequest{
			Group: s.Labels["group"], Version: s.Labels["version"], Resource: s.Labels["resource"],
			Subresource: s.Labels["subresource"], RemovedRelease: s.Labels["removed_release"],
			Value: s.ValueText(), From: from,
		})
	}
	return out, nil
}

// AddDeprecatedAPIRequests adds series, sorted; a series already held (the
// same labels from another file, another API server's /metrics) is kept
// once, with the first place it was read.
func (s *Snapshot) AddDeprecatedAPIRequests(ds ...DeprecatedAPIRequest) {
	for _, d := range ds {
		if !slices.ContainsFunc(s.DeprecatedAPIRequests, func(o DeprecatedAPIRequest) bool { return o.SeriesName() == d.SeriesName() }) {
			s.DeprecatedAPIRequests = append(s.DeprecatedAPIRequests, d)
		}
	}
	slices.SortFunc(s.DeprecatedAPIRequests, func(a, b DeprecatedAPIRequest) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Version, b.Version),
			cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Subresource, b.Subresource))
	})
}

// loadMetrics reads a saved /metrics output.
func (l *loader) loadMetrics(name string, r io.Reader) error {
	ds, err := ReadAPIServerMetrics(r, name)
	if err != nil {
		return &InputError{File: name, Err: fmt.Errorf("reading kube-apiserver /metrics output: %w", err)}
	}
	l.snap.AddDeprecatedAPIRequests(ds...)
	// Not counted in l.files: beside a snapshot, a metrics file leaves
	// the snapshot's coverage as it was.
	l.metricsRead = true
	return nil
}
