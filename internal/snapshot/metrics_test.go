package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// metricsFixture is a trimmed copy of what kube-apiserver v1.37.2 printed
// on GET /metrics on the test bed, after requests to deprecated versions.
const metricsFixture = "testdata/metrics/metrics.txt"

func TestLoadMetricsFileByContent(t *testing.T) {
	// Named as no recipe names it: known by its # HELP start.
	dir := t.TempDir()
	b, err := os.ReadFile(metricsFixture)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "apiserver-scrape")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(APIServerMetrics); c.Status != StatusRead || !c.Complete || c.Count == 0 {
		t.Fatalf("coverage %+v", c)
	}
	var dra *DeprecatedAPIRequest
	for i, d := range s.DeprecatedAPIRequests {
		if d.Group == "resource.k8s.io" && d.Version == "v1beta1" && d.Resource == "deviceclasses" {
			dra = &s.DeprecatedAPIRequests[i]
		}
	}
	if dra == nil || dra.RemovedRelease != "1.38" || dra.Value != "1" || dra.From != p {
		t.Fatalf("series: %+v", s.DeprecatedAPIRequests)
	}
	// The test bed's storage size, as v1.37.2 printed it.
	want := StorageSize{Metric: "apiserver_storage_size_bytes", Label: "storage_cluster_id", LabelValue: "etcd-0",
		Value: "278528", Bytes: 278528, From: p}
	if len(s.StorageSizes) != 1 || s.StorageSizes[0] != want {
		t.Fatalf("storage sizes %+v, want %+v", s.StorageSizes, want)
	}
	if c := s.Status(APIServerMetrics); c.Count != len(s.DeprecatedAPIRequests)+1 {
		t.Errorf("coverage count %d, want the deprecated series and the storage size", c.Count)
	}
}

// TestStorageSizeNames: the size is kept under each name an API server
// version exports; a file without any, or that stops before their place,
// is read (their absence proves nothing), and a file cut before the
// deprecated-API family is still refused.
func TestStorageSizeNames(t *testing.T) {
	head := "# HELP apiserver_request_total x\n# TYPE apiserver_request_total counter\napiserver_request_total{code=\"200\"} 1\n"
	dep := "# HELP apiserver_requested_deprecated_apis x\n# TYPE apiserver_requested_deprecated_apis gauge\n"
	tail := "# HELP workqueue_depth x\n# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"a\"} 0\n"
	for name, tc := range map[string]struct {
		text string
		want []string
	}{
		"1.25": {head + dep + "# HELP etcd_db_total_size_in_bytes x\n# TYPE etcd_db_total_size_in_bytes gauge\n" +
			"etcd_db_total_size_in_bytes{endpoint=\"https://127.0.0.1:2379\"} 1.610612736e+09\n" + tail,
			[]string{`etcd_db_total_size_in_bytes{endpoint="https://127.0.0.1:2379"}=1610612736`}},
		"1.27": {head + dep + "# HELP apiserver_storage_db_total_size_in_bytes x\n# TYPE apiserver_storage_db_total_size_in_bytes gauge\n" +
			"apiserver_storage_db_total_size_in_bytes{endpoint=\"https://127.0.0.1:2379\"} 2.097152e+07\n" + tail,
			[]string{`apiserver_storage_db_total_size_in_bytes{endpoint="https://127.0.0.1:2379"}=20971520`}},
		"none":    {head + dep + tail, nil},
		"stopped": {head + dep, nil},
	} {
		m, err := ReadMetrics(strings.NewReader(tc.text), "f")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var got []string
		for _, z := range m.StorageSizes {
			got = append(got, z.SeriesName()+"="+z.Value)
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%s: %v, want %v", name, got, tc.want)
		}
	}
	if _, err := ReadMetrics(strings.NewReader(head), "f"); err == nil {
		t.Error("a file cut before apiserver_requested_deprecated_apis was read")
	}
}

// A recipe dump without metrics.txt (made before the recipe dumped it):
// /metrics is not in the input, never "no deprecated usage".
func TestMetricsNotInInput(t *testing.T) {
	dir := t.TempDir()
	aks := "../checks/testdata/managed/aks"
	entries, err := os.ReadDir(aks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == RecipeMetrics {
			continue
		}
		b, err := os.ReadFile(filepath.Join(aks, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := LoadPaths([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Status(Nodes); !c.Complete {
		t.Fatalf("nodes %+v: not read as a recipe dump", c)
	}
	if c := s.Status(APIServerMetrics); c.Status != StatusNotInInput || c.Complete {
		t.Fatalf("coverage %+v, want not in the input", c)
	}
}

func TestMetricsInRecipeDumpAndSnapshot(t *testing.T) {
	dir := t.TempDir()
	aks := "../checks/testdata/managed/aks"
	entries, err := os.ReadDir(aks)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == RecipeMetrics {
			continue // replaced below by the test bed's
		}
		b, err := os.ReadFile(filepath.Join(aks, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := os.ReadFile(metricsFixture)
	if err := os.WriteFile(filepath.Join(dir, RecipeMetrics), m, 0o600); err != nil {
		t.Fatal(err)
	}
	s, notes, err := LoadPathsWith([]string{dir}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notes {
		if strings.Contains(n, RecipeMetrics) {
			t.Errorf("skipped: %s", n)
		}
	}
	n := len(s.DeprecatedAPIRequests)
	if c := s.Status(APIServerMetrics); c.Status != StatusRead || n == 0 {
		t.Fatalf("coverage %+v, %d series", c, n)
	}
	// The recipe dump's other resources stay complete beside it.
	if c := s.Status(Nodes); !c.Complete {
		t.Errorf("nodes no longer complete: %+v", c)
	}
	// snapshot, then --from snapshot: the series and the coverage stay.
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	snapPath := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(snapPath, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{snapPath})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.DeprecatedAPIRequests) != n || back.DeprecatedAPIRequests[0] != s.DeprecatedAPIRequests[0] {
		t.Fatalf("after the snapshot: %+v, want %+v", back.DeprecatedAPIRequests, s.DeprecatedAPIRequests)
	}
	if c := back.Status(APIServerMetrics); c.Status != StatusRead || !c.Complete {
		t.Fatalf("coverage after the snapshot: %+v", c)
	}
	if len(back.StorageSizes) != 1 || back.StorageSizes[0] != s.StorageSizes[0] {
		t.Fatalf("storage sizes after the snapshot: %+v, want %+v", back.StorageSizes, s.StorageSizes)
	}
}

func TestBadMetricsFileIsAnInputError(t *testing.T) {
	good, _ := os.ReadFile(metricsFixture)
	cut := bytes.Index(good, []byte("# HELP apiserver_requested_deprecated_apis"))
	for name, body := range map[string][]byte{
		"truncated mid-line":       good[:len(good)-5],
		"truncated before":         good[:cut],
		"garbage named metrics":    []byte("this is not metrics\n{{{\n"),
		"garbage after a # HELP":   append([]byte("# HELP apiserver_request_total x\n"), []byte("}}} ]]\n")...),
		"empty file named metrics": {},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, RecipeMetrics)
			if err := os.WriteFile(p, body, 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPaths([]string{p})
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an InputError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("more than one line: %q", err)
			}
		})
	}
}

func TestRecipeScriptDumpsMetrics(t *testing.T) {
	script := RecipeScript([]Resource{Nodes, APIServerMetrics})
	if !strings.Contains(script, "dump metrics.txt get --raw /metrics\n") {
		t.Fatalf("script:\n%s", script)
	}
}

// writeLatencyText is a /metrics output with the request-duration
// histogram: a POST on pods (kept), a dry-run POST and a LIST (dropped).
const writeLatencyText = `# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="0.5"} 90
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="1"} 95
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="+Inf"} 100
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 80
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 100
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="All",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="1"} 1
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="All",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="+Inf"} 1
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="All",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 0.1
apiserver_request_duration_seconds_count{component="apiserver",dry_run="All",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 1
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1",le="1"} 3
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1",le="+Inf"} 3
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 0.3
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3
# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.
# TYPE apiserver_request_total counter
apiserver_request_total{code="201",component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 100
# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
`

// TestWriteLatencyKeptAndRoundTrips: of the request-duration histogram
// only single-object writes that are no dry run are kept, with their count
// and le="1" bucket, and they survive a snapshot.
func TestWriteLatencyKeptAndRoundTrips(t *testing.T) {
	m, err := ReadMetrics(strings.NewReader(writeLatencyText), "metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := WriteLatency{Verb: "POST", Version: "v1", Resource: "pods", Count: 100, Within1s: 95, From: "metrics.txt"}
	if len(m.WriteLatency) != 1 || m.WriteLatency[0] != want {
		t.Fatalf("write latency %+v, want [%+v]", m.WriteLatency, want)
	}
	s := New(Source{})
	s.AddMetrics(m)
	s.SetCoverage(APIServerMetrics, StatusRead, "")
	s.SetComplete(APIServerMetrics, nil)
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snap.json")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	back, err := LoadPaths([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.WriteLatency) != 1 || back.WriteLatency[0] != want {
		t.Fatalf("after the snapshot: %+v", back.WriteLatency)
	}
}

// TestMergeKeepsMetrics: a live read gets /metrics in a part of its own
// and merges it; every series kept from it must survive the merge (the
// write latency once did not, and a live audit said "no series").
func TestMergeKeepsMetrics(t *testing.T) {
	m, err := ReadMetrics(strings.NewReader(writeLatencyText), "GET /metrics")
	if err != nil {
		t.Fatal(err)
	}
	part := New(Source{})
	part.AddMetrics(m)
	part.AddStorageSizes(StorageSize{Metric: "apiserver_storage_size_bytes", Label: "storage_cluster_id", LabelValue: "etcd-0", Value: "1", Bytes: 1})
	part.AddDeprecatedAPIRequests(DeprecatedAPIRequest{Group: "g", Version: "v1beta1", Resource: "r", Value: "1"})
	s := New(Source{})
	s.Merge(part)
	if len(s.WriteLatency) != 1 || len(s.StorageSizes) != 1 || len(s.DeprecatedAPIRequests) != 1 {
		t.Fatalf("after the merge: %d write latency, %d storage size, %d deprecated series, want 1 each",
			len(s.WriteLatency), len(s.StorageSizes), len(s.DeprecatedAPIRequests))
	}
}
