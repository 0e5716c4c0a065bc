package fleet_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	authenticationv1 "k8s.io/api/authentication/v1"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// The response headers with which the API server says how APF classified
// a request (k8s.io/apiserver's flowcontrol filter).
const (
	headerFlowSchemaUID    = "X-Kubernetes-PF-FlowSchema-UID"
	headerPriorityLevelUID = "X-Kubernetes-PF-PriorityLevel-UID"
)

// TestHelmFlowControl renders the chart with flowControl.enabled, applies
// the rendering server-side to the test bed (API Priority and Fairness on,
// as kube-apiserver has it by default), and shows that kubegap's audit, run
// as the chart's audit ServiceAccount, is classified by the chart's
// FlowSchema into its PriorityLevelConfiguration: the response headers of a
// request as that account name both objects' UIDs, and the API server's
// apiserver_flowcontrol_dispatched_requests_total for the pair grows by
// exactly the audit's requests in the audit log.
func TestHelmFlowControl(t *testing.T) {
	helm := helmBin(t)
	values := []string{"--set", "flowControl.enabled=true", "--set", "publish.enabled=false"}
	run(t, helm, append([]string{"lint", "--strict", chart}, values...)...)

	c := testcluster.Get(t)
	ns := c.Namespace(t)
	const release = "apf"
	file := filepath.Join(t.TempDir(), "apf.yaml")
	if err := os.WriteFile(file, run(t, helm, append([]string{"template", release, chart, "--namespace", ns}, values...)...), 0o600); err != nil {
		t.Fatal(err)
	}
	// Without the value the chart renders neither object (TestHelmChart's
	// lists of kinds); with it, one of each, named after the release.
	fs := typed[flowcontrolv1.FlowSchema](t, file, "FlowSchema")
	pl := typed[flowcontrolv1.PriorityLevelConfiguration](t, file, "PriorityLevelConfiguration")
	if len(fs) != 1 || len(pl) != 1 {
		t.Fatalf("%d FlowSchemas, %d PriorityLevelConfigurations; want one each", len(fs), len(pl))
	}
	name := fs[0].Name
	sa := release + "-kubegap-audit"
	if fs[0].Spec.PriorityLevelConfiguration.Name != pl[0].Name || len(fs[0].Spec.Rules) != 1 ||
		!slices.ContainsFunc(fs[0].Spec.Rules[0].Subjects, func(s flowcontrolv1.Subject) bool {
			return s.Kind == flowcontrolv1.SubjectKindServiceAccount && s.ServiceAccount.Namespace == ns && s.ServiceAccount.Name == sa
		}) {
		t.Fatalf("FlowSchema %s: %+v does not send %s/%s to %s", name, fs[0].Spec, ns, sa, pl[0].Name)
	}

	admin := c.Client(t, testcluster.UserAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The chart's precedence must come before the built-in FlowSchema that
	// would otherwise take every ServiceAccount: as this server has it.
	builtin, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, "service-accounts", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the test bed's built-in service-accounts FlowSchema: %v", err)
	}
	if fs[0].Spec.MatchingPrecedence >= builtin.Spec.MatchingPrecedence {
		t.Errorf("matchingPrecedence %d does not come before service-accounts' %d (priority level %s)",
			fs[0].Spec.MatchingPrecedence, builtin.Spec.MatchingPrecedence, builtin.Spec.PriorityLevelConfiguration.Name)
	}

	adminKC := c.Kubeconfig(t, testcluster.UserAdmin)
	run(t, c.Kubectl(), "--kubeconfig", adminKC, "apply", "--server-side", "--field-manager=helm-flowcontrol-test", "-f", file)
	t.Cleanup(func() {
		// The FlowSchema, the priority level and the RBAC are cluster-scoped:
		// the namespace's removal does not take them.
		out, err := exec.Command(c.Kubectl(), "--kubeconfig", adminKC, "delete", "--ignore-not-found", "--wait=false", "-f", file).CombinedOutput()
		if err != nil {
			t.Errorf("kubectl delete -f %s: %v\n%s", file, err, out)
		}
	})
	servedFS, err := admin.FlowcontrolV1().FlowSchemas().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	servedPL, err := admin.FlowcontrolV1().PriorityLevelConfigurations().Get(ctx, pl[0].Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptrTo(int64(600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s: %v", sa, err)
	}
	saCfg := c.Config(t, testcluster.UserReader)
	saCfg.BearerToken = tok.Status.Token

	// The API server's APF configuration controller takes the new objects
	// up asynchronously: wait until a request of the ServiceAccount is
	// classified by them.
	deadline := time.Now().Add(time.Minute)
	for {
		fsUID, plUID := classification(ctx, t, saCfg, "/api/v1/namespaces/"+ns+"/pods?limit=1")
		if fsUID == string(servedFS.UID) && plUID == string(servedPL.UID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a request as %s is still classified by FlowSchema %q / priority level %q, not %s (%s) / %s (%s)",
				sa, fsUID, plUID, name, servedFS.UID, servedPL.Name, servedPL.UID)
		}
		time.Sleep(200 * time.Millisecond)
	}

	kc, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserReader))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		a.Token = tok.Status.Token
	}
	kcPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	c.LoadYAMLInto(t, ns, "../audit/testdata/clean.yaml")

	before := flowMetrics(ctx, t, admin, name, servedPL.Name)
	mark := c.Mark(t)
	t0 := time.Now()
	cmd := exec.Command(testcluster.Kubegap(t), "audit", "--kubeconfig", kcPath, "-o", "json", "--fail-on", "none", "-q")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubegap audit as %s: %v\n%s", sa, err, stderr.String())
	}
	took := time.Since(t0)
	user := "system:serviceaccount:" + ns + ":" + sa
	reqs := c.RequestsSince(t, mark, user)
	after := flowMetrics(ctx, t, admin, name, servedPL.Name)
	if len(reqs) == 0 {
		t.Fatalf("the audit log shows no request by %s", user)
	}
	for _, r := range reqs {
		if r.Verb != "get" && r.Verb != "list" && r.Verb != "watch" {
			t.Errorf("%s sent %s %s", user, r.Verb, r.RequestURI)
		}
	}
	dispatched := after.dispatched - before.dispatched
	if dispatched != float64(len(reqs)) {
		t.Errorf("FlowSchema %s / priority level %s dispatched %.0f requests during the audit; the audit log has %d by %s",
			name, servedPL.Name, dispatched, len(reqs), user)
	}
	waits := after.waitCount - before.waitCount
	meanWait := 0.0
	if waits > 0 {
		meanWait = (after.waitSum - before.waitSum) / waits
	}
	t.Logf("kubegap audit as %s: %d requests in %v, all dispatched by FlowSchema %s at priority level %s "+
		"(%.0f nominal seats on this server); mean queue wait %.2f ms over %.0f requests",
		sa, len(reqs), took.Round(time.Millisecond), name, servedPL.Name, after.nominalSeats, meanWait*1000, waits)
}

func ptrTo[T any](v T) *T { return &v }

// classification sends one GET as cfg's user and returns the UIDs of the
// FlowSchema and priority level the API server says it used.
func classification(ctx context.Context, t *testing.T, cfg *rest.Config, path string) (flowSchema, priorityLevel string) {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	return resp.Header.Get(headerFlowSchemaUID), resp.Header.Get(headerPriorityLevelUID)
}

// flowCounts are the API server's APF metrics for one FlowSchema and
// priority level.
type flowCounts struct {
	dispatched         float64
	waitSum, waitCount float64
	nominalSeats       float64
}

// flowMetrics reads the API server's /metrics (as the admin user) for the
// FlowSchema and priority level named.
func flowMetrics(ctx context.Context, t *testing.T, admin kubernetes.Interface, flowSchema, priorityLevel string) flowCounts {
	t.Helper()
	body, err := admin.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	labelled := func(m *dto.Metric, want map[string]string) bool {
		n := 0
		for _, l := range m.GetLabel() {
			if v, ok := want[l.GetName()]; ok {
				if l.GetValue() != v {
					return false
				}
				n++
			}
		}
		return n == len(want)
	}
	var out flowCounts
	both := map[string]string{"flow_schema": flowSchema, "priority_level": priorityLevel}
	for _, m := range families["apiserver_flowcontrol_dispatched_requests_total"].GetMetric() {
		if labelled(m, both) {
			out.dispatched += m.GetCounter().GetValue()
		}
	}
	for _, m := range families["apiserver_flowcontrol_request_wait_duration_seconds"].GetMetric() {
		if labelled(m, both) {
			out.waitSum += m.GetHistogram().GetSampleSum()
			out.waitCount += float64(m.GetHistogram().GetSampleCount())
		}
	}
	for _, m := range families["apiserver_flowcontrol_nominal_limit_seats"].GetMetric() {
		if labelled(m, map[string]string{"priority_level": priorityLevel}) {
			out.nominalSeats = m.GetGauge().GetValue()
		}
	}
	return out
}
