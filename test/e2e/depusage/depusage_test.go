// Package depusage tests the deprecated-api-usage check against the real
// kube-apiserver v1.37.2: a client requests a deprecated version the test
// bed serves, and kubegap's live audit reports what the server counted.
package depusage

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// resource.k8s.io/v1beta1 is deprecated in v1.37 and removed in 1.38
// (apiserver_requested_deprecated_apis says removed_release="1.38"); as a
// beta version it is off by default, so the test bed turns it on. Core v1
// Endpoints are deprecated and served without a removal release.
func TestMain(m *testing.M) {
	os.Exit(testcluster.MainWith(m, "--runtime-config=resource.k8s.io/v1beta1=true"))
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	code, out, errOut := testcluster.Run(t, args...)
	return result{code, out, errOut}
}

type report struct {
	Coverage []struct{ Resource, Status, Message string }
	Checks   []struct {
		ID, Status string
		Rules      []struct{ ID, Status, Reason string }
	}
	Findings []struct {
		Check, Severity, Title, Preflight string
		Objects                           []struct{ Kind, Name string }
		Evidence                          []string
	}
}

func audit(t *testing.T, args ...string) report {
	t.Helper()
	r := run(t, append([]string{"audit", "--checks", "deprecated-api-usage", "-o", "json"}, args...)...)
	if r.code == 2 {
		t.Fatalf("audit %v: exit 2: %s", args, r.stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, r.stdout)
	}
	return rep
}

// requestDeprecated LISTs resource.k8s.io/v1beta1 deviceclasses and core
// v1 endpoints as the admin: a client on deprecated versions.
func requestDeprecated(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	dyn := c.Dynamic(t, testcluster.UserAdmin)
	ctx := context.Background()
	if _, err := dyn.Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1beta1", Resource: "deviceclasses"}).
		List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing resource.k8s.io/v1beta1 deviceclasses: %v", err)
	}
	if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "endpoints"}).Namespace("default").
		List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("listing v1 endpoints: %v", err)
	}
}

func findingOn(rep report, gv, resource string) (sev, preflight, title string, ok bool) {
	for _, f := range rep.Findings {
		if f.Check != "deprecated-api-usage" {
			continue
		}
		for _, o := range f.Objects {
			if o.Kind == "APIServerMetric" && strings.Contains(o.Name, `resource="`+resource+`"`) &&
				strings.Contains(f.Title, " "+gv+" ") {
				return f.Severity, f.Preflight, f.Title, true
			}
		}
	}
	return "", "", "", false
}

// TestDeprecatedUsageLive: after a client lists resource.k8s.io/v1beta1,
// the live audit (as deploy/rbac.yaml's reader) names that
// group/version/resource: low without a target, high and fix-before with
// --target-version 1.38, which removes it.
func TestDeprecatedUsageLive(t *testing.T) {
	c := testcluster.Get(t)
	requestDeprecated(t, c)
	kc := c.Kubeconfig(t, testcluster.UserReader)

	mark := c.Mark(t)
	rep := audit(t, "--kubeconfig", kc)
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
	for _, f := range rep.Findings {
		t.Logf("no target: %s %s", f.Severity, f.Title)
		for _, e := range f.Evidence {
			t.Logf("    %s", e)
		}
	}
	sev, pre, title, ok := findingOn(rep, "resource.k8s.io/v1beta1", "deviceclasses")
	if !ok || sev != "low" || pre != "" || !strings.Contains(title, "removed in Kubernetes 1.38") {
		t.Errorf("resource.k8s.io/v1beta1 deviceclasses without a target: %q %q %q (found %v), want low, removed in 1.38", sev, pre, title, ok)
	}
	if sev, _, title, ok := findingOn(rep, "v1", "endpoints"); !ok || sev != "low" || !strings.Contains(title, "no removal release") {
		t.Errorf("v1 endpoints: %q %q (found %v), want low without a removal release", sev, title, ok)
	}
	for _, cov := range rep.Coverage {
		if cov.Resource == "/metrics" && cov.Status != "read" {
			t.Errorf("/metrics coverage %+v, want read", cov)
		}
	}

	rep = audit(t, "--kubeconfig", kc, "--target-version", "1.38")
	for _, f := range rep.Findings {
		t.Logf("target 1.38: %s %s %s", f.Severity, f.Preflight, f.Title)
	}
	sev, pre, title, ok = findingOn(rep, "resource.k8s.io/v1beta1", "deviceclasses")
	if !ok || sev != "high" || pre != "before" || !strings.Contains(title, "this upgrade breaks them") {
		t.Errorf("resource.k8s.io/v1beta1 deviceclasses at 1.38: %q %q %q (found %v), want high, fix before", sev, pre, title, ok)
	}
	if sev, _, _, ok := findingOn(rep, "v1", "endpoints"); !ok || sev != "low" {
		t.Errorf("v1 endpoints at 1.38: %q (found %v), want low: 1.38 still serves it", sev, ok)
	}
}

// TestDeprecatedUsageForbidden: a user who may not GET /metrics (the
// built-in view role, in one namespace) gets the check unknown, never a
// pass, and the report says which RBAC rule and which kubectl command
// complete it.
func TestDeprecatedUsageForbidden(t *testing.T) {
	c := testcluster.Get(t)
	requestDeprecated(t, c)
	kc := c.Kubeconfig(t, testcluster.UserNSViewer)
	rep := audit(t, "--kubeconfig", kc, "-n", testcluster.ViewerNamespace)
	for _, cov := range rep.Coverage {
		if cov.Resource == "/metrics" && cov.Status != "forbidden" {
			t.Errorf("/metrics coverage %+v, want forbidden", cov)
		}
	}
	// /metrics forbidden: the rule is partial (the viewer reads pods in
	// its namespace) or, with nothing read at all, skipped and the check
	// not-evaluated (docs/verdicts.md); never a pass.
	if len(rep.Checks) != 1 || rep.Checks[0].Status != "not-evaluated" && rep.Checks[0].Status != "partial" ||
		len(rep.Checks[0].Rules) != 1 || rep.Checks[0].Rules[0].Status == "evaluated" {
		t.Fatalf("checks %+v, want deprecated-api-usage unknown (partial or not-evaluated), never pass", rep.Checks)
	}
	t.Logf("forbidden /metrics: %+v", rep.Checks)
	if len(rep.Findings) != 0 {
		t.Errorf("findings without /metrics: %+v", rep.Findings)
	}
	text := run(t, "audit", "--checks", "deprecated-api-usage", "--kubeconfig", kc, "-n", testcluster.ViewerNamespace)
	for _, want := range []string{`{nonResourceURLs: ["/metrics"], verbs: [get]}`, "kubectl get --raw /metrics > metrics.txt"} {
		if !strings.Contains(text.stdout, want) {
			t.Errorf("the text report does not say %q:\n%s", want, text.stdout)
		}
	}
}

// TestSavedMetricsOffline: a `kubectl get --raw /metrics` saved by the
// real kubectl, given to --from alone, gives the same finding; and a
// snapshot keeps it.
func TestSavedMetricsOffline(t *testing.T) {
	c := testcluster.Get(t)
	requestDeprecated(t, c)
	dir := t.TempDir()
	out, err := exec.Command(c.Kubectl(), "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "get", "--raw", "/metrics").Output()
	if err != nil {
		t.Fatalf("kubectl get --raw /metrics: %v", err)
	}
	t.Logf("kubectl get --raw /metrics: %d bytes", len(out))
	path := dir + "/metrics.txt"
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	rep := audit(t, "--from", path)
	if sev, _, _, ok := findingOn(rep, "resource.k8s.io/v1beta1", "deviceclasses"); !ok || sev != "low" {
		t.Errorf("from the saved file: %q (found %v)", sev, ok)
	}
	snap := dir + "/snap.json"
	if r := run(t, "snapshot", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-o", snap, "-q"); r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	rep = audit(t, "--from", snap, "--target-version", "1.38")
	if sev, pre, _, ok := findingOn(rep, "resource.k8s.io/v1beta1", "deviceclasses"); !ok || sev != "high" || pre != "before" {
		t.Errorf("from the snapshot at 1.38: %q %q (found %v)", sev, pre, ok)
	}
	// Cut short, the file is refused: one line, exit 2.
	if err := os.WriteFile(path, out[:len(out)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, "audit", "--from", path)
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
		t.Errorf("a truncated metrics file: exit %d, stderr %q, stdout %d bytes; want exit 2, one line, nothing written", r.code, r.stderr, len(r.stdout))
	}
}
