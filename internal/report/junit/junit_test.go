package junit

import (
	"bytes"
	"strings"
	"testing"

	gojunit "github.com/joshdk/go-junit"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/reporttest"
)

// parse reads the XML back with a JUnit reader (github.com/joshdk/go-junit,
// which CI report tools use), not with our own structs.
func parse(t *testing.T, r *report.Report) []gojunit.Suite {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	suites, err := gojunit.Ingest(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return suites
}

func TestDemoSuitesPerCheck(t *testing.T) {
	r := reporttest.Demo(t)
	suites := parse(t, r)
	if len(suites) != len(r.Checks) {
		t.Fatalf("%d suites for %d checks", len(suites), len(r.Checks))
	}
	failed := 0
	for i, s := range suites {
		c := r.Checks[i]
		if s.Name != c.ID {
			t.Errorf("suite %d is %s, want %s", i, s.Name, c.ID)
		}
		if c.Status == report.Fail && s.Totals.Failed != c.Findings {
			t.Errorf("%s: %d failed cases for %d findings", c.ID, s.Totals.Failed, c.Findings)
		}
		if c.Status == report.Pass && (s.Totals.Passed != 1 || s.Totals.Failed != 0) {
			t.Errorf("%s passed but totals %+v", c.ID, s.Totals)
		}
		failed += s.Totals.Failed
		for _, tc := range s.Tests {
			if tc.Status == gojunit.StatusFailed && (tc.Error == nil || tc.Message == "") {
				t.Errorf("%s: failed case %q without a message", c.ID, tc.Name)
			}
		}
	}
	if failed != len(r.Findings) {
		t.Errorf("%d failed cases for %d findings", failed, len(r.Findings))
	}
}

func TestSkippedForUnknownAndSuppressed(t *testing.T) {
	suites := parse(t, reporttest.Edges())
	status := map[string]string{}
	for _, s := range suites {
		for _, tc := range s.Tests {
			status[s.Name+": "+tc.Name] = string(tc.Status) + " " + tc.Message
		}
	}
	want := map[string]string{
		"pod-sandbox-failures: pod-sandbox-failures not-evaluated": "skipped not-evaluated: v1/pods forbidden",
		"pdb-blocks-drain: pdb-blocks-drain partial":               "skipped partial: only namespace payments was read",
	}
	for k, v := range want {
		if status[k] != v {
			t.Errorf("%s = %q, want %q (all: %v)", k, status[k], v, status)
		}
	}
	var sup, fail int
	for k, v := range status {
		if strings.HasPrefix(k, "version-skew: kubelet lags [kg-") && v == "skipped suppressed by config: pool retired in Q1" {
			sup++
		}
		if strings.HasPrefix(k, "image-pull-always: DaemonSet payments/agent") && strings.HasPrefix(v, "failed ") {
			fail++
		}
	}
	if sup != 1 || fail != 1 {
		t.Errorf("suppressed %d, failed %d: %v", sup, fail, status)
	}
}
