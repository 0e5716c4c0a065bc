package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// startExporter runs an exporter over src on a free loopback port until
// the test ends; each audit's error (nil for a success) arrives on the
// returned channel.
func startExporter(t *testing.T, src *sourceFlags, interval time.Duration, saw func(*snapshot.Snapshot)) (*exporter, <-chan error) {
	t.Helper()
	var errOut bytes.Buffer
	app := &App{Out: io.Discard, ErrOut: &errOut}
	app.defaults()
	fl := auditFlags{output: "json", failOn: "none", minSeverity: "info", quiet: true, color: "never"}
	e, err := newExporter(app, src, fl, exporterFlags{interval: interval, listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	audits := make(chan error, 16)
	e.sawSnapshot = saw
	e.audited = func(err error) { audits <- err }
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- e.run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("exporter stopped with %v", err)
		}
		t.Logf("exporter log:\n%s", errOut.String())
	})
	return e, audits
}

func nextAudit(t *testing.T, audits <-chan error) error {
	t.Helper()
	select {
	case err := <-audits:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("no audit ended within 30s")
		return nil
	}
}

func get(t *testing.T, e *exporter, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + e.ln.Addr().String() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// sample returns the value of the one line of a text exposition that
// starts with series (a name, or a name and labels), or "" if none does.
func sample(exposition, series string) string {
	for _, line := range strings.Split(exposition, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return rest
		}
	}
	return ""
}

func demoSource() *sourceFlags {
	src := newSourceFlags(&cobra.Command{}, true)
	src.demo = true
	return src
}

// TestExporterKeepsOnlyTheReport: once an audit has ended, nothing holds
// the snapshot it read (its objects are collected), while /metrics still
// serves that audit's findings.
func TestExporterKeepsOnlyTheReport(t *testing.T) {
	collected := make(chan string, 4)
	e, audits := startExporter(t, demoSource(), time.Hour, func(s *snapshot.Snapshot) {
		if len(s.Pods) == 0 {
			t.Error("the demo snapshot has no pods")
			return
		}
		runtime.AddCleanup(s, func(what string) { collected <- what }, "snapshot")
		runtime.AddCleanup(&s.Pods[0], func(what string) { collected <- what }, "pods")
	})
	if err := nextAudit(t, audits); err != nil {
		t.Fatalf("the demo audit failed: %v", err)
	}
	want := map[string]bool{"snapshot": true, "pods": true}
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		runtime.GC()
		select {
		case what := <-collected:
			delete(want, what)
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatalf("after the audit, still reachable: %v", want)
		}
	}
	if code, body := get(t, e, "/metrics"); code != 200 || sample(body, `kubegap_findings{check="host-binary-glibc",namespace="kube-system",preflight="",severity="high"}`) != "1" {
		t.Fatalf("/metrics: %d, no host-binary-glibc finding:\n%s", code, body)
	}
}

// TestExporterFailedAuditKeepsTheLastGoodMetrics: an audit that fails
// (its input became unreadable) counts an error, /readyz stays ready, and
// the findings and last-success time stay the good audit's.
func TestExporterFailedAuditKeepsTheLastGoodMetrics(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "pods.yaml")
	pod := `apiVersion: v1
kind: Pod
metadata: {name: agent, namespace: kube-system}
spec:
  containers: [{name: agent, image: "example.com/agent:1", imagePullPolicy: Always}]
status:
  containerStatuses:
  - name: agent
    restartCount: 40
    state: {waiting: {reason: CrashLoopBackOff}}
`
	if err := os.WriteFile(file, []byte(pod), 0o644); err != nil {
		t.Fatal(err)
	}
	src := newSourceFlags(&cobra.Command{}, true)
	src.from = []string{file}
	e, audits := startExporter(t, src, time.Second, nil)
	if err := nextAudit(t, audits); err != nil {
		t.Fatalf("first audit: %v", err)
	}
	code, good := get(t, e, "/metrics")
	if code != 200 || sample(good, "kubegap_audit_errors_total") != "0" {
		t.Fatalf("/metrics after a good audit: %d\n%s", code, good)
	}
	if code, _ := get(t, e, "/readyz"); code != 200 {
		t.Fatalf("/readyz after a good audit: %d", code)
	}
	if err := os.WriteFile(file, []byte("kind: [unterminated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		err := nextAudit(t, audits)
		if err != nil {
			break
		}
		// An audit that started before the file changed.
	}
	_, bad := get(t, e, "/metrics")
	if got := sample(bad, "kubegap_audit_errors_total"); got != "1" {
		t.Errorf("errors_total %q after one failed audit, want 1", got)
	}
	for _, series := range []string{"kubegap_audit_last_success_timestamp_seconds", `kubegap_check_status{check="host-binary-glibc",status="partial"}`} {
		if g, b := sample(good, series), sample(bad, series); g == "" || g != b {
			t.Errorf("%s: %q after the good audit, %q after the failed one; want it kept", series, g, b)
		}
	}
	if code, _ := get(t, e, "/readyz"); code != 200 {
		t.Errorf("/readyz after a failed audit that followed a good one: %d, want 200", code)
	}
}

// TestExporterNotReadyBeforeASuccess: with no successful audit yet,
// /readyz is 503, /healthz 200, and /metrics has the error but no
// findings and no last-success time.
func TestExporterNotReadyBeforeASuccess(t *testing.T) {
	src := newSourceFlags(&cobra.Command{}, true)
	src.from = []string{filepath.Join(t.TempDir(), "missing.yaml")}
	e, audits := startExporter(t, src, time.Hour, nil)
	if err := nextAudit(t, audits); err == nil {
		t.Fatal("an audit of a missing file succeeded")
	}
	if code, _ := get(t, e, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d, want 503", code)
	}
	if code, _ := get(t, e, "/healthz"); code != 200 {
		t.Errorf("/healthz %d, want 200", code)
	}
	_, body := get(t, e, "/metrics")
	if sample(body, "kubegap_audit_errors_total") != "1" || strings.Contains(body, "kubegap_findings") || strings.Contains(body, "kubegap_audit_last_success_timestamp_seconds ") {
		t.Errorf("/metrics before any success:\n%s", body)
	}
}

// TestExporterRefusesBadFlags: mistakes are one error at start (exit 2),
// before the port is taken.
func TestExporterRefusesBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--demo", "--interval", "0s"}, "--interval 0s: want at least 1s"},
		{[]string{"--demo", "--checks", "no-such-check"}, "no-such-check"},
		{[]string{"--demo", "--listen", "127.0.0.1:-1"}, "--listen 127.0.0.1:-1"},
		{[]string{"--demo", "--pushgateway", "http://127.0.0.1:1"}, "--pushgateway needs --cluster-name with --demo or --from"},
		{[]string{"--demo", "--pushgateway", "ftp://x"}, `--pushgateway "ftp://x": want an http:// or https:// URL`},
		{[]string{"--demo", "--cluster-name", "a"}, "--cluster-name names the cluster for --pushgateway, which is not given"},
	} {
		var out, errOut bytes.Buffer
		code := Run(context.Background(), &App{Out: &out, ErrOut: &errOut}, append([]string{"exporter"}, tc.args...))
		if code != ExitError || !strings.Contains(errOut.String(), tc.want) || strings.Count(errOut.String(), "\n") != 1 || out.Len() != 0 {
			t.Errorf("exporter %v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, errOut.String(), out.String(), tc.want)
		}
	}
}

// TestAuditOutputPrometheus: -o prometheus counts the same findings as the
// JSON report, per severity.
func TestAuditOutputPrometheus(t *testing.T) {
	var prom, js, errOut bytes.Buffer
	Run(context.Background(), &App{Out: &prom, ErrOut: &errOut}, []string{"audit", "--demo", "-o", "prometheus"})
	Run(context.Background(), &App{Out: &js, ErrOut: &errOut}, []string{"audit", "--demo", "-o", "json"})
	var rep report.Report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	bySeverity := map[string]int{}
	for _, f := range rep.Findings {
		bySeverity[f.Severity.String()]++
	}
	got := map[string]int{}
	for _, line := range strings.Split(prom.String(), "\n") {
		if !strings.HasPrefix(line, "kubegap_findings{") {
			continue
		}
		i := strings.Index(line, `severity="`)
		sev := line[i+len(`severity="`):]
		sev = sev[:strings.IndexByte(sev, '"')]
		var n int
		if _, err := fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		got[sev] += n
	}
	if len(bySeverity) == 0 || !maps.Equal(got, bySeverity) {
		t.Errorf("-o prometheus counts %v, the JSON report %v", got, bySeverity)
	}
}
