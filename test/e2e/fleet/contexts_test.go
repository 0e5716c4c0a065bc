// Package fleet_test runs kubegap against more than one real
// kube-apiserver: audit --contexts across clusters, one of them stopped in
// the middle of its audit, and the Helm chart applied to a test bed.
package fleet_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

const demoDir = "../../../internal/demo/cluster/"

// The contexts of the fleet kubeconfig: alpha is audited whole, beta's API
// server is stopped once its discovery is done, gamma's address refuses
// connections from the start. beta is named as EKS names contexts, with
// characters no file name may hold.
const (
	ctxAlpha = "alpha"
	ctxBeta  = "arn:aws:eks:eu-west-1:000000000000:cluster/beta"
	ctxGamma = "gamma"
)

// fleetSummary is the part of kubegap's fleet summary the test reads.
type fleetSummary struct {
	Kind     string
	Clusters []struct {
		Context, ServerVersion, Status, Error, Report string
		ExitCode                                      int
		Findings                                      struct{ Critical, High, Medium, Low, Info int }
		Checks                                        struct{ Fail, Pass, Partial, NotEvaluated int }
		ReadErrors                                    []struct{ Resource, Status, Message string }
	}
	Totals struct {
		Contexts, Audited, Errors, ExitCode int
	}
}

// TestAuditContextsOneStoppedMidRun audits three contexts in one run:
// alpha (the suite's test bed, holding the demo's glibc gap), beta (a
// second test bed whose kube-apiserver and etcd are stopped right after
// its discovery, before its first LIST) and gamma (nothing listening).
// The run goes on past beta and gamma, writes one report per audited
// context, and exits 2, the worst of the three.
func TestAuditContextsOneStoppedMidRun(t *testing.T) {
	alpha := testcluster.Get(t)
	loadGlibcGap(t, alpha)
	beta := testcluster.StartAnother(t)
	// Created without LoadYAML, whose clean-up would find beta stopped.
	if _, err := beta.Client(t, testcluster.UserAdmin).CoreV1().Namespaces().Create(context.Background(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "beta-only"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// beta is reached through a proxy that, on the first request that is
	// not discovery, stops beta for real, stops accepting connections
	// itself and then forwards the request: it meets beta's closed port,
	// and the proxy drops the client's connection as a dead server's
	// kernel would. From then on a new connection is refused, as beta's
	// own address refuses it.
	var stopped atomic.Bool
	var once sync.Once
	target, err := url.Parse(beta.Host)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(beta.CAData())
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	rp.ErrorHandler = func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) }
	var proxy *httptest.Server
	proxy = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isDiscovery(r.URL.Path) {
			once.Do(func() {
				beta.Stop(t)
				proxy.Listener.Close()
				stopped.Store(true)
			})
		}
		rp.ServeHTTP(w, r)
	}))
	proxy.Config.ErrorLog = nil
	proxy.StartTLS()
	defer proxy.Close()

	kc := filepath.Join(t.TempDir(), "fleet-kubeconfig")
	cfg := clientcmdapi.NewConfig()
	add := func(name, server string, ca []byte, token string) {
		cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
		cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	}
	add(ctxAlpha, alpha.Host, alpha.CAData(), alpha.Token(t, testcluster.UserReader))
	add(ctxBeta, proxy.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw}), beta.Token(t, testcluster.UserReader))
	add(ctxGamma, "https://"+closedAddr(t), alpha.CAData(), "nobody")
	cfg.CurrentContext = ctxAlpha
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "reports")
	cmd := exec.Command(testcluster.Kubegap(t), "audit", "--kubeconfig", kc, "--all-contexts", "-o", "json", "--output-dir", dir)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	began := time.Now()
	err = cmd.Run()
	t.Logf("kubegap audit --all-contexts took %s; stderr:\n%s", time.Since(began).Round(time.Second), stderr.String())
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("exit %v, want 2 (gamma could not be audited); stderr:\n%s", err, stderr.String())
	}
	if !stopped.Load() {
		t.Fatal("beta was never stopped: its audit sent no request past discovery")
	}
	var sum fleetSummary
	if err := json.Unmarshal([]byte(stdout.String()), &sum); err != nil {
		t.Fatalf("the summary is not JSON: %v\n%s", err, stdout.String())
	}
	if sum.Kind != "FleetSummary" || sum.Totals.Contexts != 3 || sum.Totals.Audited != 2 || sum.Totals.Errors != 1 || sum.Totals.ExitCode != 2 {
		t.Errorf("totals = %+v", sum.Totals)
	}
	rows := map[string]int{}
	for i, c := range sum.Clusters {
		rows[c.Context] = i
	}
	if len(rows) != 3 {
		t.Fatalf("summary rows: %+v", sum.Clusters)
	}

	a := sum.Clusters[rows[ctxAlpha]]
	if a.Status != "audited" || a.ServerVersion != "v1.37.2" || a.ExitCode != 1 || a.Findings.High == 0 || a.Checks.Fail == 0 || len(a.ReadErrors) != 0 {
		t.Errorf("alpha = %+v", a)
	}
	if a.Report != filepath.Join(dir, "alpha.json") {
		t.Errorf("alpha's report is %q", a.Report)
	}
	var rep struct {
		Kind     string
		Source   struct{ Context, ServerVersion string }
		Findings []struct {
			Check   string
			Objects []struct{ Kind, Name string }
		}
	}
	readJSON(t, a.Report, &rep)
	found := false
	for _, f := range rep.Findings {
		for _, o := range f.Objects {
			found = found || (f.Check == "host-binary-glibc" && o.Kind == "DaemonSet" && o.Name == "azure-cns")
		}
	}
	if rep.Kind != "AuditReport" || rep.Source.Context != ctxAlpha || !found {
		t.Errorf("alpha's report file: kind %q, context %q, glibc finding on azure-cns %v", rep.Kind, rep.Source.Context, found)
	}

	// beta answered discovery, so it has a report; every LIST after that
	// failed, so the read errors are listed and a check may pass only on
	// what discovery proved: every resource it needs is not served.
	b := sum.Clusters[rows[ctxBeta]]
	if b.Status != "audited" || b.ServerVersion != "v1.37.2" || b.Checks.Partial+b.Checks.NotEvaluated == 0 || len(b.ReadErrors) == 0 {
		t.Errorf("beta = %+v", b)
	}
	if b.ExitCode != 0 {
		t.Errorf("beta exits %d; a single audit of a cluster whose reads fail exits 0 without --fail-on-unknown", b.ExitCode)
	}
	for _, e := range b.ReadErrors {
		if e.Status != "error" {
			t.Errorf("beta: %s is %s, want error (the server is gone, nothing forbade the read)", e.Resource, e.Status)
		}
	}
	base := filepath.Base(b.Report)
	if filepath.Dir(b.Report) != dir || strings.ContainsAny(base, ":/") || !strings.HasSuffix(base, ".json") {
		t.Errorf("beta's report file %q is not named safely in %s", b.Report, dir)
	}
	var betaRep struct {
		Source   struct{ Context string }
		Coverage []struct{ Resource, Status string }
		Checks   []struct{ ID, Status string }
	}
	readJSON(t, b.Report, &betaRep)
	if betaRep.Source.Context != ctxBeta {
		t.Errorf("beta's report names context %q", betaRep.Source.Context)
	}
	status := map[string]string{}
	for _, c := range betaRep.Coverage {
		status[c.Resource] = c.Status
	}
	byID := map[string]check.Check{}
	for _, c := range checks.All() {
		byID[c.ID] = c
	}
	passed := 0
	for _, c := range betaRep.Checks {
		if c.Status != "pass" {
			continue
		}
		passed++
		for _, in := range byID[c.ID].Reads {
			if st := status[in.Resource.String()]; !in.Optional && st != "not-served" {
				t.Errorf("beta: %s passed though %s, which it needs, is %q", c.ID, in.Resource, st)
			}
		}
	}
	if passed != b.Checks.Pass {
		t.Errorf("beta: the summary counts %d checks passed, the report %d", b.Checks.Pass, passed)
	}
	// beta's own audit log: the reader's requests before the stop were
	// discovery only, so the stop came between discovery and the lists.
	served := beta.RequestsAfterStop(t, testcluster.UserReader)
	if len(served) == 0 {
		t.Error("beta's audit log shows no request of the reader: its discovery went elsewhere")
	}
	for _, r := range served {
		if r.Verb != "get" || !isDiscovery(strings.SplitN(r.RequestURI, "?", 2)[0]) {
			t.Errorf("beta served %s %s before it stopped; want discovery only", r.Verb, r.RequestURI)
		}
	}

	g := sum.Clusters[rows[ctxGamma]]
	if g.Status != "error" || g.ExitCode != 2 || g.Report != "" || !strings.Contains(g.Error, "cannot read the API server") {
		t.Errorf("gamma = %+v", g)
	}
	if !strings.Contains(stderr.String(), `could not audit context "gamma"`) {
		t.Errorf("stderr does not name gamma:\n%s", stderr.String())
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Errorf("--output-dir holds %d files (%v), want alpha's and beta's", len(entries), err)
	}

	// The fleet run sent alpha nothing but reads.
	for _, r := range alpha.Requests(t, testcluster.UserReader) {
		if r.Verb != "get" && r.Verb != "list" && r.Verb != "watch" {
			t.Errorf("alpha: the reader sent %s %s", r.Verb, r.RequestURI)
		}
	}

	// The Markdown summary of the clusters still up names each row with
	// the same counts.
	md := exec.Command(testcluster.Kubegap(t), "audit", "--kubeconfig", kc, "--contexts", ctxGamma+","+ctxAlpha, "-o", "markdown", "-q")
	var mdOut strings.Builder
	md.Stdout = &mdOut
	err = md.Run()
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("--contexts gamma,alpha -o markdown: exit %v, want 2", err)
	}
	wantRow := fmt.Sprintf("| %s | v1.37.2 | %d | %d | %d | %d | %d | %d | %d | %d | 0 | 1 | - |", ctxAlpha,
		a.Findings.Critical, a.Findings.High, a.Findings.Medium, a.Findings.Low, a.Findings.Info, a.Checks.Fail, a.Checks.Pass, a.Checks.Partial+a.Checks.NotEvaluated)
	for _, want := range []string{"1 context audited, 1 could not be audited", wantRow, "| gamma | - | - |", "could not audit: cannot read the API server"} {
		if !strings.Contains(mdOut.String(), want) {
			t.Errorf("Markdown summary lacks %q:\n%s", want, mdOut.String())
		}
	}
	if ig, ia := strings.Index(mdOut.String(), "| gamma |"), strings.Index(mdOut.String(), "| alpha |"); ig > ia {
		t.Errorf("rows are not in the order --contexts gives them:\n%s", mdOut.String())
	}
}

// loadGlibcGap loads the demo's nodes and its Azure CNI DaemonSet, whose
// installer needs a newer glibc than the nodes have.
func loadGlibcGap(t *testing.T, c *testcluster.Cluster) {
	ns := c.Namespace(t)
	var objs []runtime.Object
	for _, o := range testcluster.ReadYAML(t, demoDir+"nodes.yaml", demoDir+"azure-cni.yaml") {
		if o.GetNamespace() != "" {
			o.SetNamespace(ns)
			if o.GetKind() == "Event" {
				_ = unstructured.SetNestedField(o.Object, ns, "involvedObject", "namespace")
			}
		}
		objs = append(objs, o)
	}
	c.Apply(t, objs...)
}

// isDiscovery reports whether a path is one of the requests that find out
// what a server serves: /version, the group lists and each group
// version's resource list.
func isDiscovery(p string) bool {
	switch {
	case p == "/version", p == "/api", p == "/apis", p == "/api/v1":
		return true
	case strings.HasPrefix(p, "/apis/"):
		return strings.Count(strings.Trim(p, "/"), "/") == 2
	}
	return false
}

func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
