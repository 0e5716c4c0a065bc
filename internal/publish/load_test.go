package publish

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
)

func reportJSON(t *testing.T, ns string) []byte {
	t.Helper()
	rep := &report.Report{APIVersion: report.APIVersion, Kind: report.Kind,
		Checks:   []report.CheckResult{{ID: "pdb-blocks-drain", Status: report.Fail}},
		Findings: []finding.Finding{{ID: "kg-1", Check: "pdb-blocks-drain", Objects: []finding.ObjectRef{{APIVersion: "policy/v1", Kind: "PodDisruptionBudget", Namespace: ns, Name: "x"}}}},
	}
	var b bytes.Buffer
	if err := report.WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLoadReport(t *testing.T) {
	good := reportJSON(t, "shop")
	if rep, err := LoadReport(bytes.NewReader(good), "r.json"); err != nil || len(rep.Findings) != 1 {
		t.Fatalf("a good report: %v", err)
	}
	bad := map[string]struct {
		in   []byte
		want string
	}{
		"truncated":     {good[:len(good)/2], "truncated"},
		"trailing data": {append(append([]byte{}, good...), []byte(`{"more":1}`)...), "not a kubegap JSON report"},
		"not JSON":      {[]byte("apiVersion: v1\nkind: List\n"), "not a kubegap JSON report"},
		"another kind":  {[]byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"Snapshot","checks":[]}`), `kind "Snapshot"`},
		"no checks":     {[]byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"AuditReport","checks":[]}`), "no checks"},
		"empty":         {nil, "not a kubegap JSON report"},
		"bad namespace": {reportJSON(t, "Shop/../x"), "not a namespace name"},
		"wrong type":    {[]byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"AuditReport","checks":"x"}`), "checks"},
	}
	for name, tc := range bad {
		_, err := LoadReport(bytes.NewReader(tc.in), "r.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", name, err, tc.want)
		}
	}
}
