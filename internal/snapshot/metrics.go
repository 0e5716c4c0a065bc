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
// the apiserver_requested_deprecated_apis series, the storage database's
// size and the latency of single-object writes are kept.
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

// StorageSize is one series of the storage database's size as the API
// server exports it (apimetrics.StorageSizeFamilies): the bytes of the
// file its etcd allocated, which etcd's space quota is measured against.
type StorageSize struct {
	// Metric is the family, which depends on the API server's version.
	Metric string `json:"metric"`
	// Label and LabelValue are the series' one label: storage_cluster_id
	// ("etcd-0") for apiserver_storage_size_bytes, endpoint (the etcd URL)
	// for the older names.
	Label      string `json:"label"`
	LabelValue string `json:"labelValue"`
	// Value is the gauge's value in decimal ("278528").
	Value string  `json:"value"`
	Bytes float64 `json:"bytes"`
	From  string  `json:"from"`
}

// SeriesName is the series as the exposition names it:
// apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}.
func (z StorageSize) SeriesName() string {
	return fmt.Sprintf("%s{%s=%q}", z.Metric, z.Label, z.LabelValue)
}

// WriteLatency is one series of apiserver_request_duration_seconds for a
// mutating verb (POST, PUT, PATCH, DELETE) on a single object
// (scope="resource"): how many such requests the API server that answered
// has served since it started, and how many of them within one second,
// the bound of the upstream API call latency SLO. Only these two numbers
// of the histogram are kept.
type WriteLatency struct {
	Verb        string `json:"verb"`
	Group       string `json:"group"`
	Version     string `json:"version"`
	Resource    string `json:"resource"`
	Subresource string `json:"subresource,omitempty"`
	// Count is the histogram's _count; Within1s its le="1" bucket.
	Count    float64 `json:"count"`
	Within1s float64 `json:"within1s"`
	From     string  `json:"from"`
}

// SeriesName names the histogram's series as the exposition does, less
// the component and dry_run labels:
// apiserver_request_duration_seconds{group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"}.
func (w WriteLatency) SeriesName() string {
	return fmt.Sprintf(`%s{group=%q,resource=%q,scope="resource",subresource=%q,verb=%q,version=%q}`,
		apimetrics.RequestDuration, w.Group, w.Resource, w.Subresource, w.Verb, w.Version)
}

// writeLatencyOf keeps a request-duration series when it is a mutating
// single-object request with a le="1" bucket; dry runs are left out.
func writeLatencyOf(s apimetrics.Series, from string) (WriteLatency, bool) {
	if !slices.Contains(apimetrics.WriteVerbs, s.Labels["verb"]) || s.Labels["scope"] != "resource" || s.Labels["dry_run"] != "" {
		return WriteLatency{}, false
	}
	for _, b := range s.Buckets {
		if b.UpperBound == 1 {
			return WriteLatency{Verb: s.Labels["verb"], Group: s.Labels["group"], Version: s.Labels["version"],
				Resource: s.Labels["resource"], Subresource: s.Labels["subresource"],
				Count: s.Value, Within1s: b.Count, From: from}, true
		}
	}
	return WriteLatency{}, false
}

// MetricsRead is what kubegap keeps of one /metrics output.
type MetricsRead struct {
	Deprecated   []DeprecatedAPIRequest
	StorageSizes []StorageSize
	WriteLatency []WriteLatency
}

// ReadMetrics reads a /metrics output into the deprecated-API and storage
// size series it holds, each marked as read from from. A file that stops
// before the deprecated-API family's place is refused as cut; the storage
// size families are kept when present (an API server exports one of three
// names, or none), their absence proving nothing.
func ReadMetrics(r io.Reader, from string) (MetricsRead, error) {
	fams, err := apimetrics.ReadWith(r, []string{apimetrics.DeprecatedAPIs}, append(slices.Clip(apimetrics.StorageSizeFamilies), apimetrics.RequestDuration))
	if err != nil {
		return MetricsRead{}, err
	}
	var out MetricsRead
	for _, s := range fams[apimetrics.DeprecatedAPIs] {
		out.Deprecated = append(out.Deprecated, DeprecatedAPIRequest{
			Group: s.Labels["group"], Version: s.Labels["version"], Resource: s.Labels["resource"],
			Subresource: s.Labels["subresource"], RemovedRelease: s.Labels["removed_release"],
			Value: s.ValueText(), From: from,
		})
	}
	for _, fam := range apimetrics.StorageSizeFamilies {
		label := "endpoint"
		if fam == apimetrics.StorageSize {
			label = "storage_cluster_id"
		}
		for _, s := range fams[fam] {
			out.StorageSizes = append(out.StorageSizes, StorageSize{Metric: fam, Label: label, LabelValue: s.Labels[label],
				Value: s.ValueText(), Bytes: s.Value, From: from})
		}
	}
	for _, s := range fams[apimetrics.RequestDuration] {
		if w, ok := writeLatencyOf(s, from); ok {
			out.WriteLatency = append(out.WriteLatency, w)
		}
	}
	return out, nil
}

// AddMetrics adds what one /metrics output held.
func (s *Snapshot) AddMetrics(m MetricsRead) {
	s.AddDeprecatedAPIRequests(m.Deprecated...)
	s.AddStorageSizes(m.StorageSizes...)
	s.AddWriteLatency(m.WriteLatency...)
}

// AddWriteLatency adds series, sorted; a series already held (the same
// labels, from another file or API server) is kept once, as first read.
func (s *Snapshot) AddWriteLatency(ws ...WriteLatency) {
	for _, w := range ws {
		if !slices.ContainsFunc(s.WriteLatency, func(o WriteLatency) bool { return o.SeriesName() == w.SeriesName() }) {
			s.WriteLatency = append(s.WriteLatency, w)
		}
	}
	slices.SortFunc(s.WriteLatency, func(a, b WriteLatency) int { return cmp.Compare(a.SeriesName(), b.SeriesName()) })
}

// AddStorageSizes adds series, sorted; a series already held (the same
// name and label, from another file) is kept once, as first read.
func (s *Snapshot) AddStorageSizes(zs ...StorageSize) {
	for _, z := range zs {
		if !slices.ContainsFunc(s.StorageSizes, func(o StorageSize) bool { return o.SeriesName() == z.SeriesName() }) {
			s.StorageSizes = append(s.StorageSizes, z)
		}
	}
	slices.SortFunc(s.StorageSizes, func(a, b StorageSize) int { return cmp.Compare(a.SeriesName(), b.SeriesName()) })
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
	m, err := ReadMetrics(r, name)
	if err != nil {
		return &InputError{File: name, Err: fmt.Errorf("reading kube-apiserver /metrics output: %w", err)}
	}
	l.snap.AddMetrics(m)
	// Not counted in l.files: beside a snapshot, a metrics file leaves
	// the snapshot's coverage as it was.
	l.metricsRead = true
	return nil
}
