//go:build linux

// Package prometheus tests kubegap's metrics against the real thing:
// Debian's prometheus (and its promtool) and prometheus-pushgateway,
// which hack/test.sh installs. Each test starts the binaries itself, on
// loopback, on free ports, with temporary directories; they die with the
// test binary.
package prometheus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// tool finds a binary the tests need on PATH.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not on PATH: install Debian's %s package (hack/test.sh does)", name, pkg)
	}
	return p
}

// freePort returns a loopback address nothing listens on right now.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// server is a process the test started; it gets SIGTERM when the test
// ends and SIGKILL if the test binary dies first.
type server struct {
	cmd  *exec.Cmd
	log  *bytes.Buffer
	done chan error
}

func start(t *testing.T, argv ...string) *server {
	t.Helper()
	s := &server{log: &bytes.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(argv[0], argv[1:]...)
	s.cmd.Dir = t.TempDir()
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", argv[0], err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(argv[0]), s.log.String())
		}
	})
	return s
}

// waitFor polls until ok returns true or a minute has passed.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func httpGet(rawURL string) (int, []byte, error) {
	resp, err := http.Get(rawURL)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// kubegap runs the binary and returns its standard output; exit codes 0
// and 1 (findings at or above --fail-on) are success.
func kubegap(t *testing.T, args ...string) []byte {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(testcluster.Kubegap(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("kubegap %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.Bytes()
}

// severityCounts are the JSON report's findings per severity.
func severityCounts(t *testing.T, args ...string) map[string]int {
	t.Helper()
	var rep struct {
		Findings []struct {
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(kubegap(t, append(args, "-o", "json")...), &rep); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, f := range rep.Findings {
		counts[f.Severity]++
	}
	if len(counts) == 0 {
		t.Fatalf("kubegap %v found nothing: the comparison would prove nothing", args)
	}
	return counts
}

// startExporter runs kubegap exporter with args on a free port and returns
// its address once /readyz says an audit has succeeded.
func startExporter(t *testing.T, args ...string) (*server, string) {
	t.Helper()
	addr := freePort(t)
	s := start(t, append([]string{testcluster.Kubegap(t), "exporter", "--listen", addr}, args...)...)
	waitFor(t, "the exporter's /readyz", func() bool {
		code, _, err := httpGet("http://" + addr + "/readyz")
		return err == nil && code == http.StatusOK
	})
	return s, addr
}

// promtoolCheck runs promtool check metrics on an exposition: it must be
// clean (exit 0, nothing printed).
func promtoolCheck(t *testing.T, what string, exposition []byte) {
	t.Helper()
	cmd := exec.Command(tool(t, "promtool", "prometheus"), "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics on %s: %v\n%s", what, err, out)
	}
}

// TestPromtoolChecksTheExposition: -o prometheus and the exporter's
// /metrics pass promtool's linter.
func TestPromtoolChecksTheExposition(t *testing.T) {
	promtoolCheck(t, "audit --demo -o prometheus", kubegap(t, "audit", "--demo", "-o", "prometheus"))
	promtoolCheck(t, "audit --demo --target-version 1.36 -o prometheus", kubegap(t, "audit", "--demo", "--target-version", "1.36", "-o", "prometheus"))
	_, addr := startExporter(t, "--demo", "--interval", "1h")
	code, body, err := httpGet("http://" + addr + "/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("/metrics: %d %v", code, err)
	}
	promtoolCheck(t, "the exporter's /metrics", body)
}

// TestPrometheusScrapesTheExporter: a real Prometheus scrapes the exporter
// on loopback, and PromQL through its HTTP API gives the demo report's
// findings per severity. SIGTERM then stops the exporter with exit 0.
func TestPrometheusScrapesTheExporter(t *testing.T) {
	want := severityCounts(t, "audit", "--demo")
	exp, addr := startExporter(t, "--demo", "--interval", "1h")

	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kubegap
    static_configs:
      - targets: [%q]
`, addr)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freePort(t)
	start(t, tool(t, "prometheus", "prometheus"), "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr)

	query := func(q string) []promSample {
		code, body, err := httpGet("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
		if err != nil || code != http.StatusOK {
			return nil
		}
		var r struct {
			Status string `json:"status"`
			Data   struct {
				Result []promSample `json:"result"`
			} `json:"data"`
		}
		if json.Unmarshal(body, &r) != nil || r.Status != "success" {
			return nil
		}
		return r.Data.Result
	}
	var got map[string]int
	waitFor(t, "Prometheus to scrape kubegap_findings", func() bool {
		res := query(`sum by (severity) (kubegap_findings{job="kubegap"})`)
		if len(res) == 0 {
			return false
		}
		got = map[string]int{}
		for _, s := range res {
			n, err := strconv.ParseFloat(s.Value[1].(string), 64)
			if err != nil {
				t.Fatalf("value %v: %v", s.Value, err)
			}
			got[s.Metric["severity"]] = int(n)
		}
		return true
	})
	if !maps.Equal(got, want) {
		t.Errorf("PromQL sum by (severity) (kubegap_findings): %v; the JSON report: %v", got, want)
	}
	// The target labels Prometheus adds, and one check's status.
	if res := query(`kubegap_check_status{check="host-binary-glibc",status="fail"} == 1`); len(res) != 1 || res[0].Metric["instance"] != addr {
		t.Errorf("host-binary-glibc fail status: %+v, want one series with instance=%s", res, addr)
	}

	_ = exp.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exp.done:
		exp.done <- err // for the cleanup
		if err != nil {
			t.Errorf("exporter after SIGTERM: %v, want exit 0\n%s", err, exp.log.String())
		}
		if !strings.Contains(exp.log.String(), "kubegap exporter: stopped") {
			t.Errorf("exporter log lacks the stop:\n%s", exp.log.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("exporter still running 20s after SIGTERM")
	}
}

type promSample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

// pushGroups reads the Pushgateway's groups: for each grouping key
// (cluster), the sum of its kubegap_findings samples.
func pushGroups(t *testing.T, gw string) map[string]int {
	t.Helper()
	code, body, err := httpGet(gw + "/api/v1/metrics")
	if err != nil || code != http.StatusOK {
		t.Fatalf("%s/api/v1/metrics: %d %v", gw, code, err)
	}
	var r struct {
		Data []map[string]json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	groups := map[string]int{}
	for _, g := range r.Data {
		var labels map[string]string
		if err := json.Unmarshal(g["labels"], &labels); err != nil {
			t.Fatal(err)
		}
		if labels["job"] != "kubegap" {
			t.Errorf("a group with job %q, want kubegap: %v", labels["job"], labels)
		}
		var fam struct {
			Metrics []struct {
				Value string `json:"value"`
			} `json:"metrics"`
		}
		total := 0
		if raw, ok := g["kubegap_findings"]; ok {
			if err := json.Unmarshal(raw, &fam); err != nil {
				t.Fatal(err)
			}
			for _, m := range fam.Metrics {
				n, err := strconv.ParseFloat(m.Value, 64)
				if err != nil {
					t.Fatal(err)
				}
				total += int(n)
			}
		}
		groups[labels["cluster"]] = total
	}
	return groups
}

func total(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}

// TestPushgatewayKeepsEveryCluster: pushes with different --cluster-name
// land in different groups, so neither overwrites the other; a second push
// of one cluster replaces only its own group; the exporter pushes too.
func TestPushgatewayKeepsEveryCluster(t *testing.T) {
	gwAddr := freePort(t)
	// Debian's build persists to /var/lib/prometheus by default: this one
	// keeps its state in the test's directory.
	start(t, tool(t, "prometheus-pushgateway", "prometheus-pushgateway"), "--web.listen-address="+gwAddr,
		"--persistence.file="+filepath.Join(t.TempDir(), "pushgateway.data"))
	gw := "http://" + gwAddr
	waitFor(t, "the Pushgateway", func() bool {
		code, _, err := httpGet(gw + "/-/ready")
		return err == nil && code == http.StatusOK
	})

	all := total(severityCounts(t, "audit", "--demo"))
	one := total(severityCounts(t, "audit", "--demo", "--checks", "image-pull-always"))
	if all == one {
		t.Fatalf("both audits find %d: the test could not tell the clusters apart", all)
	}
	kubegap(t, "audit", "--demo", "-q", "-o", "summary", "--pushgateway", gw, "--cluster-name", "alpha")
	kubegap(t, "audit", "--demo", "-q", "-o", "summary", "--checks", "image-pull-always", "--pushgateway", gw, "--cluster-name", "beta")
	if got := pushGroups(t, gw); !maps.Equal(got, map[string]int{"alpha": all, "beta": one}) {
		t.Fatalf("pushgateway groups %v, want alpha with %d findings and beta with %d", got, all, one)
	}
	// alpha again, now with one check: its group changes, beta's stays.
	kubegap(t, "audit", "--demo", "-q", "-o", "summary", "--checks", "image-pull-always", "--pushgateway", gw, "--cluster-name", "alpha")
	if got := pushGroups(t, gw); !maps.Equal(got, map[string]int{"alpha": one, "beta": one}) {
		t.Fatalf("after alpha's second push: %v, want alpha and beta with %d each", got, one)
	}

	startExporter(t, "--demo", "--interval", "1h", "--pushgateway", gw, "--cluster-name", "gamma")
	waitFor(t, "the exporter's push", func() bool { _, ok := pushGroups(t, gw)["gamma"]; return ok })
	if got := pushGroups(t, gw); !maps.Equal(got, map[string]int{"alpha": one, "beta": one, "gamma": all}) {
		t.Errorf("after the exporter's push: %v", got)
	}
}

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// TestPromtoolChecksTheAlertingRules: deploy/'s rules load in Prometheus.
func TestPromtoolChecksTheAlertingRules(t *testing.T) {
	out, err := exec.Command(tool(t, "promtool", "prometheus"), "check", "rules", "../../../deploy/prometheus/kubegap-alerts.yaml").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS: 3 rules found") {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}

// TestExporterAuditsTheTestBedReadOnly: against the real kube-apiserver,
// as the read-only user, the exporter's scheduled audits find what
// `kubegap audit` finds, and the audit log shows nothing but the reads
// kubegap's allow-list admits.
func TestExporterAuditsTheTestBedReadOnly(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	var objs []runtime.Object
	for _, f := range []string{"nodes.yaml", "azure-cni.yaml", "payments.yaml", "observability.yaml", "webhook.yaml"} {
		for _, o := range testcluster.ReadYAML(t, "../../../internal/demo/cluster/"+f) {
			// The demo's kube-system and default objects go to the test's
			// own namespace, as test/e2e/audit loads them.
			if o.GetNamespace() == "kube-system" || o.GetNamespace() == "default" {
				o.SetNamespace(ns)
				if o.GetKind() == "Event" {
					_ = unstructured.SetNestedField(o.Object, ns, "involvedObject", "namespace")
				}
			}
			objs = append(objs, o)
		}
	}
	c.Apply(t, objs...)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	mark := c.Mark(t)
	want := severityCounts(t, "audit", "--kubeconfig", kc, "-q")

	exp, addr := startExporter(t, "--kubeconfig", kc, "--interval", "2s")
	scrape := func() string {
		_, body, err := httpGet("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	first := sampleValue(scrape(), "kubegap_audit_last_success_timestamp_seconds")
	var body string
	waitFor(t, "a second scheduled audit", func() bool {
		body = scrape()
		v := sampleValue(body, "kubegap_audit_last_success_timestamp_seconds")
		return v != "" && v != first
	})
	got := map[string]int{}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "kubegap_findings{") {
			continue
		}
		_, sev, _ := strings.Cut(line, `severity="`)
		sev, _, _ = strings.Cut(sev, `"`)
		n, err := strconv.Atoi(line[strings.LastIndexByte(line, ' ')+1:])
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[sev] += n
	}
	if !maps.Equal(got, want) {
		t.Errorf("the exporter's findings per severity %v, kubegap audit's %v", got, want)
	}
	_ = exp.cmd.Process.Signal(syscall.SIGTERM)
	exp.done <- <-exp.done
	if testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{}) == 0 {
		t.Fatal("the audit log holds no request from the reader")
	}
}

// sampleValue is the value of an unlabelled sample in an exposition.
func sampleValue(exposition, name string) string {
	for _, line := range strings.Split(exposition, "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return v
		}
	}
	return ""
}

// TestExporterChildAuditFailureKeepsTheLastReport: each scheduled audit is
// a child process that reads the kubeconfig afresh. When the server it
// names stops answering, the failed audit is counted and logged in one
// line, and the exporter keeps serving the last good audit's findings.
func TestExporterChildAuditFailureKeepsTheLastReport(t *testing.T) {
	c := testcluster.Get(t)
	good, err := os.ReadFile(c.Kubeconfig(t, testcluster.UserReader))
	if err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kc, good, 0o600); err != nil {
		t.Fatal(err)
	}
	exp, addr := startExporter(t, "--kubeconfig", kc, "--interval", "2s")
	scrape := func() string {
		_, body, err := httpGet("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		return string(body)
	}
	before := scrape()
	last := sampleValue(before, "kubegap_audit_last_success_timestamp_seconds")
	if last == "" || !strings.Contains(before, "kubegap_check_status{") {
		t.Fatalf("no check statuses or success time after the first audit:\n%s", before)
	}
	// The same credentials, a server that refuses connections.
	dead := "https://" + freePort(t)
	var cfg map[string]any
	if err := yaml.Unmarshal(good, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, cl := range cfg["clusters"].([]any) {
		cl.(map[string]any)["cluster"].(map[string]any)["server"] = dead
	}
	bad, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kc, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	var after string
	waitFor(t, "a failed audit", func() bool {
		after = scrape()
		return sampleValue(after, "kubegap_audit_errors_total") == "1"
	})
	if got := sampleValue(after, "kubegap_audit_last_success_timestamp_seconds"); got == "" {
		t.Errorf("the last success time is gone after a failure")
	}
	for _, line := range strings.Split(before, "\n") {
		if strings.HasPrefix(line, "kubegap_check_status{") || strings.HasPrefix(line, "kubegap_findings{") {
			if !strings.Contains(after, line+"\n") {
				t.Errorf("%s: gone or changed after a failed audit", line)
			}
		}
	}
	if code, _, err := httpGet("http://" + addr + "/readyz"); err != nil || code != http.StatusOK {
		t.Errorf("/readyz after a failure that followed a success: %d %v, want 200", code, err)
	}
	_ = exp.cmd.Process.Signal(syscall.SIGTERM)
	exp.done <- <-exp.done
	var failed []string
	for _, line := range strings.Split(exp.log.String(), "\n") {
		if strings.HasPrefix(line, "kubegap exporter: audit failed: ") {
			failed = append(failed, line)
		}
	}
	if len(failed) == 0 || !strings.Contains(failed[0], strings.TrimPrefix(dead, "https://")) {
		t.Errorf("the log has no one-line failure naming %s:\n%s", dead, exp.log.String())
	}
	if strings.Contains(exp.log.String(), "panic") {
		t.Errorf("the log shows a panic:\n%s", exp.log.String())
	}
}
