// Package selfusage tests that kubegap itself is never counted as a client
// of a deprecated API version: every way it reads a cluster (the live
// audit, the preflight, snapshot, the recipe dump, the MCP audit) runs
// against a fresh kube-apiserver v1.37.2 that serves every beta version
// (so that a request to any deprecated one would be served and counted),
// and then the server's own records are read: the
// apiserver_requested_deprecated_apis series of /metrics and the
// k8s.io/deprecated annotation of the audit log.
package selfusage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) {
	os.Exit(testcluster.MainWith(m, "--runtime-config=api/beta=true"))
}

const deprecatedSeries = "apiserver_requested_deprecated_apis"

// series reads /metrics as the admin and returns the deprecated-API series
// by their labels, parsed with Prometheus' own parser.
func series(t *testing.T, c *testcluster.Cluster) map[string]bool {
	t.Helper()
	body, err := c.Client(t, testcluster.UserAdmin).Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]bool{}
	for _, m := range fams[deprecatedSeries].GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(labels)
		out[strings.Join(labels, ",")] = true
	}
	return out
}

func added(before, after map[string]bool) []string {
	var out []string
	for s := range after {
		if !before[s] {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// deprecatedRequests are the requests the audit log marks as made to a
// deprecated version.
func deprecatedRequests(reqs []testcluster.Request) []string {
	var out []string
	for _, r := range reqs {
		if r.Annotations["k8s.io/deprecated"] == "true" {
			out = append(out, fmt.Sprintf("%s %s (%s %s, removed in %q)", r.Verb, r.RequestURI, r.APIVersion, r.Resource,
				r.Annotations["k8s.io/removed-release"]))
		}
	}
	return out
}

func kubegap(t *testing.T, env []string, args ...string) (string, string) {
	t.Helper()
	cmd := exec.Command(testcluster.Kubegap(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ee.ExitCode() == 2) {
		t.Fatalf("kubegap %v: %v\n%s", args, err, errOut.String())
	}
	return out.String(), errOut.String()
}

// mcpAudit runs the MCP audit tool of 'kubegap mcp' over stdio.
func mcpAudit(t *testing.T, kubeconfig string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testcluster.Kubegap(t), "mcp", "--kubeconfig", kubeconfig)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(t.TempDir(), "no-kubeconfig"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "kubegap-e2e", Version: "v0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("kubegap mcp: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	for _, args := range []map[string]any{{}, {"target_version": "1.38"}} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "audit", Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("MCP audit %v: %v %+v\n%s", args, err, res, stderr.String())
		}
	}
}

// TestKubegapIsNeverDeprecatedUsage: after every way kubegap reads the
// cluster, the API server counted no new deprecated-API series and its
// audit log marks no request of kubegap's user as deprecated. The same two
// detectors then see a client that does LIST deprecated versions, so the
// test can fail.
func TestKubegapIsNeverDeprecatedUsage(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	one := int32(1)
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1.0"}}}}
	c.Apply(t,
		&appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
			Spec:       appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}},
		&appsv1.DaemonSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: ns},
			Spec:       appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl}})
	kc := c.Kubeconfig(t, testcluster.UserReader)
	before := series(t, c)
	t.Logf("deprecated-API series before kubegap ran: %v", slices.Sorted(mapsKeys(before)))
	mark := c.Mark(t)

	kubegap(t, nil, "audit", "--kubeconfig", kc, "-o", "json")
	kubegap(t, nil, "audit", "--kubeconfig", kc, "--target-version", "1.38", "-o", "json")
	dir := t.TempDir()
	kubegap(t, nil, "snapshot", "--kubeconfig", kc, "-o", filepath.Join(dir, "snap.json.gz"), "-q")
	recipe, _ := kubegap(t, nil, "recipe")
	dump := filepath.Join(dir, "dump")
	sh := exec.Command("sh", "-c", recipe)
	sh.Env = append(os.Environ(), "KUBECTL="+c.Kubectl()+" --kubeconfig "+kc, "DIR="+dump)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("the recipe: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dump, "metrics.txt")); err != nil {
		t.Errorf("the recipe dumped no metrics.txt: %v", err)
	}
	kubegap(t, nil, "audit", "--from", dump, "-o", "json")
	mcpAudit(t, kc)

	reqs := c.RequestsSince(t, mark, testcluster.UserReader)
	gvs := map[string]int{}
	for _, r := range reqs {
		if r.APIVersion != "" {
			gvs[r.APIVersion]++
		}
	}
	t.Logf("kubegap's user made %d requests; by group/version: %v", len(reqs), gvs)
	if len(reqs) < 100 {
		t.Fatalf("only %d requests by %s: the runs did not read the cluster, so the test shows nothing", len(reqs), testcluster.UserReader)
	}
	if bad := deprecatedRequests(reqs); len(bad) > 0 {
		t.Errorf("the audit log marks %d of kubegap's requests as deprecated:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	after := series(t, c)
	if n := added(before, after); len(n) > 0 {
		t.Errorf("the API server counted new deprecated-API series while kubegap ran: %v", n)
	}

	// The same detectors on a client that does use deprecated versions:
	// the admin LISTs resource.k8s.io/v1beta1 and core v1 endpoints.
	mark = c.Mark(t)
	dyn := c.Dynamic(t, testcluster.UserAdmin)
	for _, gvr := range []schema.GroupVersionResource{
		{Group: "resource.k8s.io", Version: "v1beta1", Resource: "deviceclasses"},
		{Version: "v1", Resource: "endpoints"},
	} {
		if _, err := dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{}); err != nil {
			t.Fatalf("listing %v: %v", gvr, err)
		}
	}
	caught := deprecatedRequests(c.RequestsSince(t, mark, testcluster.UserAdmin))
	if len(caught) != 2 {
		t.Errorf("the audit-log detector saw %d deprecated requests of the admin's two: %v", len(caught), caught)
	}
	t.Logf("detector check, audit log: %v", caught)
	newer := added(after, series(t, c))
	if !slices.ContainsFunc(newer, func(s string) bool { return strings.Contains(s, "resource=deviceclasses") }) {
		t.Errorf("the /metrics detector saw no new series for resource.k8s.io/v1beta1 deviceclasses: %v", newer)
	}
	t.Logf("detector check, new series: %v", newer)
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
