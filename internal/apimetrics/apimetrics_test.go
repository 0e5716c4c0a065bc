package apimetrics

import (
	"os"
	"strings"
	"testing"
)

// realHead is the start of what kube-apiserver v1.37.2 printed on the test
// bed (testdata/apiserver-v1.37.2.txt holds a trimmed copy).
func readFixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/apiserver-v1.37.2.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReadKeepsOnlyTheFamilyAsked(t *testing.T) {
	got, err := Read(strings.NewReader(readFixture(t)), DeprecatedAPIs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("families kept: %d, want 1", len(got))
	}
	series := got[DeprecatedAPIs]
	found := false
	for _, s := range series {
		if s.Labels["group"] == "resource.k8s.io" && s.Labels["version"] == "v1beta1" && s.Labels["resource"] == "deviceclasses" {
			found = true
			if s.Labels["removed_release"] != "1.38" || s.ValueText() != "1" {
				t.Errorf("deviceclasses series: %v", s)
			}
		}
	}
	if !found || len(series) < 3 {
		t.Fatalf("series: %v", series)
	}
}

func TestReadNoSeriesIsAnEmptyAnswer(t *testing.T) {
	in := "# HELP apiserver_request_total x\n# TYPE apiserver_request_total counter\napiserver_request_total{code=\"200\"} 3\n" +
		"# HELP workqueue_depth x\n# TYPE workqueue_depth gauge\nworkqueue_depth{name=\"a\"} 0\n"
	got, err := Read(strings.NewReader(in), DeprecatedAPIs)
	if err != nil {
		t.Fatal(err)
	}
	if len(got[DeprecatedAPIs]) != 0 {
		t.Fatalf("got %v", got)
	}
}

func TestReadRefusesBadInput(t *testing.T) {
	full := readFixture(t)
	cut := strings.Index(full, "# HELP apiserver_requested_deprecated_apis")
	for name, in := range map[string]string{
		"empty":                 "",
		"cut mid-line":          full[:len(full)-3],
		"cut before the family": full[:cut],
		"garbage line":          "# HELP apiserver_request_total x\napiserver_request_total{code=\"200\" 3\n",
		"binary":                "# HELP a b\n\x00\x01\x02\n",
		"not the API server":    "# HELP node_cpu x\n# TYPE node_cpu counter\nnode_cpu 1\n",
		"huge line":             "# HELP a b\n" + strings.Repeat("a", 2<<20) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Read(strings.NewReader(in), DeprecatedAPIs)
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}

func TestLooks(t *testing.T) {
	for in, want := range map[string]bool{
		"\n# HELP a b\n":         true,
		"# TYPE a gauge\n":       true,
		"# a comment\nkind: x\n": false,
		"apiVersion: v1\n":       false,
	} {
		if Looks([]byte(in)) != want {
			t.Errorf("Looks(%q) != %v", in, want)
		}
	}
}

// durationText is a request-duration family as kube-apiserver prints it: a
// POST at scope resource (kept), a LIST (left out before parsing) and a
// blank line.
const durationText = `# HELP apiserver_request_duration_seconds [STABLE] x
# TYPE apiserver_request_duration_seconds histogram
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1",le="1"} 3
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1",le="+Inf"} 3
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 0.3
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="namespace",subresource="",verb="LIST",version="v1"} 3

apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="1"} 95
apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1",le="+Inf"} 100
apiserver_request_duration_seconds_sum{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 80
apiserver_request_duration_seconds_count{component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="POST",version="v1"} 100
# HELP apiserver_request_total x
# TYPE apiserver_request_total counter
apiserver_request_total{code="201"} 100
`

// TestReadKeepsOnlyWritesOfRequestDuration: of the request-duration
// histogram only the single-object writes are parsed and returned, whole
// (count and buckets); a line left out unparsed must still be one of the
// family's, and an error after left-out lines names its real line.
func TestReadKeepsOnlyWritesOfRequestDuration(t *testing.T) {
	got, err := ReadWith(strings.NewReader(durationText), nil, []string{RequestDuration})
	if err != nil {
		t.Fatal(err)
	}
	s := got[RequestDuration]
	if len(s) != 1 || s[0].Labels["verb"] != "POST" || s[0].Value != 100 || len(s[0].Buckets) != 2 || s[0].Buckets[0] != (Bucket{UpperBound: 1, Count: 95}) {
		t.Fatalf("series %+v, want the POST only, with its count and buckets", s)
	}
	// Without asking for the family, nothing of it is kept.
	if got, err := ReadWith(strings.NewReader(durationText), nil, nil); err != nil || len(got[RequestDuration]) != 0 {
		t.Fatalf("not asked: %v %v", got, err)
	}
	lines := strings.Split(durationText, "\n")
	garbled := append([]string(nil), lines...)
	garbled[2] = "not_this_family{verb=\"LIST\"} 3" // a left-out line of another name
	if _, err := ReadWith(strings.NewReader(strings.Join(garbled, "\n")), nil, []string{RequestDuration}); err == nil || !strings.Contains(err.Error(), "line 3:") {
		t.Errorf("a foreign line among left-out samples: %v, want an error on line 3", err)
	}
	broken := append([]string(nil), lines...)
	broken[8] = strings.Replace(broken[8], "} 100", "} x", 1) // the POST's +Inf bucket
	if _, err := ReadWith(strings.NewReader(strings.Join(broken, "\n")), nil, []string{RequestDuration}); err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("a bad kept sample after left-out ones: %v, want an error naming line 9", err)
	}
}
