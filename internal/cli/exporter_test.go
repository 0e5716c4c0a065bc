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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubegap/kubegap/internal/report"
)

// startExporter runs `kubegap exporter args...` on a free loopback port
// until the test ends; each audit's error (nil for a success) arrives on
// the returned channel. The command line is parsed as the real one is;
// only the child process is replaced by running its command line in this
// process (the test binary is no kubegap to re-execute).
func startExporter(t *testing.T, interval time.Duration, args ...string) (*exporter, <-chan error) {
	t.Helper()
	var errOut syncBuffer
	app := &App{Out: io.Discard, ErrOut: &errOut}
	app.defaults()
	audits := make(chan error, 16)
	started := make(chan *exporter, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exporterCommand(app, func(ctx context.Context, e *exporter) error {
		e.runAudit = inProcessAudit
		e.audited = func(err error) { audits <- err }
		started <- e
		return e.run(ctx)
	})
	cmd.SetArgs(append([]string{"--listen", "127.0.0.1:0", "--interval", interval.String()}, args...))
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	stopped := make(chan error, 1)
	go func() { stopped <- cmd.ExecuteContext(ctx) }()
	var e *exporter
	select {
	case e = <-started:
	case err := <-stopped:
		t.Fatalf("exporter %v did not start: %v", args, err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("exporter stopped with %v", err)
		}
		t.Logf("exporter log:\n%s", errOut.String())
	})
	return e, audits
}

// inProcessAudit runs an audit command line in this process, as the child
// would: the report on stdout, messages on stderr, exit 2 an error.
func inProcessAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if code := Run(ctx, &App{Out: stdout, ErrOut: stderr}, args); code != ExitOK {
		return fmt.Errorf("exit status %d", code)
	}
	return nil
}

// syncBuffer is a bytes.Buffer the exporter's goroutine writes while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
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

// TestExporterServesTheChildsReport: the exporter's metrics are those of
// the report its child audit printed.
func TestExporterServesTheChildsReport(t *testing.T) {
	e, audits := startExporter(t, time.Hour, "--demo")
	if err := nextAudit(t, audits); err != nil {
		t.Fatalf("the demo audit failed: %v", err)
	}
	if code, body := get(t, e, "/metrics"); code != 200 || sample(body, `kubegap_findings{check="host-binary-glibc",namespace="kube-system",preflight="",severity="high"}`) != "1" {
		t.Fatalf("/metrics: %d, no host-binary-glibc finding:\n%s", code, body)
	}
}

// TestExporterForwardsEveryAuditFlag: every exporter flag but its own
// (exporterOnlyFlags) is one 'kubegap audit' takes, of the same type, so
// that auditArgs can hand it to the child; a flag added to the exporter
// alone fails here until it is forwarded or listed as the exporter's.
func TestExporterForwardsEveryAuditFlag(t *testing.T) {
	app := &App{Out: io.Discard, ErrOut: io.Discard}
	root := NewRootCommand(app)
	var exp, aud *cobra.Command
	for _, c := range root.Commands() {
		switch c.Name() {
		case "exporter":
			exp = c
		case "audit":
			aud = c
		}
	}
	n := 0
	exp.Flags().VisitAll(func(f *pflag.Flag) {
		if exporterOnlyFlags[f.Name] {
			return
		}
		n++
		a := aud.Flags().Lookup(f.Name)
		if a == nil {
			a = aud.InheritedFlags().Lookup(f.Name)
		}
		if a == nil {
			t.Errorf("exporter flag --%s is not an audit flag: forward it another way or add it to exporterOnlyFlags", f.Name)
		} else if a.Value.Type() != f.Value.Type() {
			t.Errorf("exporter flag --%s is a %s, audit's a %s", f.Name, f.Value.Type(), a.Value.Type())
		}
	})
	for name := range exporterOnlyFlags {
		if name != "help" && exp.Flags().Lookup(name) == nil {
			t.Errorf("exporterOnlyFlags names --%s, which the exporter does not have", name)
		}
	}
	if n < 10 {
		t.Errorf("only %d exporter flags checked: the walk found too few to prove anything", n)
	}
}

// TestExporterChildCommandLine: the child gets the audit flags given, in a
// form the audit command reads back to the same values (repeated --from
// and --checks included), and none of the exporter's own.
func TestExporterChildCommandLine(t *testing.T) {
	got := make(chan []string, 1)
	app := &App{Out: io.Discard, ErrOut: io.Discard}
	app.defaults()
	cmd := exporterCommand(app, func(_ context.Context, e *exporter) error {
		e.ln.Close()
		got <- e.args
		return nil
	})
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0", "--interval", "1h", "--pushgateway", "http://127.0.0.1:9091", "--cluster-name", "east",
		"--from", "a,b.yaml", "--from", "c.yaml", "--checks", "host-binary-glibc,image-pull-always", "--checks", "pdb-blocks-drain",
		"-n", "payments", "--target-version", "1.35", "--min-severity", "medium", "--strict", "--ignore-provider-owned"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	args := <-got
	joined := strings.Join(args, " ")
	for _, own := range []string{"interval", "listen", "pushgateway", "cluster-name"} {
		if strings.Contains(joined, "--"+own) {
			t.Errorf("the child's command line passes the exporter's --%s: %v", own, args)
		}
	}
	if args[0] != "audit" {
		t.Fatalf("the child runs %q, want audit: %v", args[0], args)
	}
	var parsed *cobra.Command
	for _, c := range NewRootCommand(app).Commands() {
		if c.Name() == "audit" {
			parsed = c
		}
	}
	if err := parsed.ParseFlags(args[1:]); err != nil {
		t.Fatalf("audit does not take the child's command line %v: %v", args, err)
	}
	f := parsed.Flags()
	want := map[string]string{
		"checks": "[host-binary-glibc,image-pull-always,pdb-blocks-drain]", "namespace": "payments",
		"target-version": "1.35", "min-severity": "medium", "strict": "true", "ignore-provider-owned": "true",
		"output": "json", "fail-on": "none", "quiet": "true", "color": "never",
	}
	for name, v := range want {
		if g := f.Lookup(name).Value.String(); g != v {
			t.Errorf("the child's --%s is %s, want %s (command line %v)", name, g, v, args)
		}
	}
	if from, _ := f.GetStringArray("from"); len(from) != 2 || from[0] != "a,b.yaml" || from[1] != "c.yaml" {
		t.Errorf("the child's --from %q, want the two files as given", from)
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
	e, audits := startExporter(t, time.Second, "--from", file)
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
	e, audits := startExporter(t, time.Hour, "--from", filepath.Join(t.TempDir(), "missing.yaml"))
	if err := nextAudit(t, audits); err == nil {
		t.Fatal("an audit of a missing file succeeded")
	}
	if code, _ := get(t, e, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d, want 503", code)
	}
	if code, _ := get(t, e, "/healthz"); code != 200 {
		t.Errorf("/healthz %d, want 200", code)
	}
	missing := e.args[len(e.args)-5] // --from=<path>, before the output flags
	if log := e.app.ErrOut.(*syncBuffer).String(); !strings.Contains(log, "kubegap exporter: audit failed: "+strings.TrimPrefix(missing, "--from=")+": no such file or directory; no audit has succeeded yet\n") {
		t.Errorf("the log does not give the child's error in one line:\n%s", log)
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
