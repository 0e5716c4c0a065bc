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
