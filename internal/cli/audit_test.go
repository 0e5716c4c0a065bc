package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func runWith(t *testing.T, app *App, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app.Out, app.ErrOut = &out, &errOut
	if app.Getenv == nil {
		app.Getenv = func(string) string { return "" }
	}
	code := Run(context.Background(), app, args)
	return code, out.String(), errOut.String()
}

func TestAuditDemoText(t *testing.T) {
	code, out, _ := runKubegap(t, "audit", "--demo")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d (the demo has high findings)", code, ExitFindings)
	}
	for _, want := range []string{"HIGH (", "kube-system/azure-cns", "cases:", "azure-cni-v2-glibc — ", "fix:", "evidence:"} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes written to a non-terminal")
	}
	if strings.Contains(out, "do-not-print-me") {
		t.Error("an environment variable value reached the report")
	}
}

func TestAuditColourOnlyOnTerminalWithoutNoColor(t *testing.T) {
	code, out, _ := runWith(t, &App{OutIsTerminal: true}, "audit", "--demo")
	if code != ExitFindings || !strings.Contains(out, "\x1b[") {
		t.Errorf("no colour on a terminal (exit %d)", code)
	}
	_, out, _ = runWith(t, &App{OutIsTerminal: true, Getenv: func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return ""
	}}, "audit", "--demo")
	if strings.Contains(out, "\x1b[") {
		t.Error("colour despite NO_COLOR")
	}
}

// TestAuditDemoJSONContract checks the report against the contract in
// design.md, and that the demo shows every founding case.
func TestAuditDemoJSONContract(t *testing.T) {
	code, out, _ := runKubegap(t, "audit", "--demo", "-o", "json")
	if code != ExitFindings {
		t.Fatalf("exit %d", code)
	}
	var rep struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Source     struct {
			Type, Context, ServerVersion string
		} `json:"source"`
		Coverage []struct {
			Resource, Status string
			Count            *int
		} `json:"coverage"`
		Checks []struct {
			ID, Status, Reason string
		} `json:"checks"`
		Findings []struct {
			Check, Severity, Title, Message, Remediation string
			Objects                                      []struct{ APIVersion, Kind, Namespace, Name string }
			Evidence, Cases                              []string
		} `json:"findings"`
		Summary map[string]int `json:"summary"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if rep.APIVersion != "kubegap.dev/v1alpha1" || rep.Kind != "AuditReport" || rep.Source.Type != "demo" || rep.Source.ServerVersion == "" {
		t.Errorf("header = %s %s %+v", rep.APIVersion, rep.Kind, rep.Source)
	}
	if len(rep.Coverage) == 0 || len(rep.Checks) == 0 || len(rep.Findings) == 0 {
		t.Fatal("coverage, checks or findings empty")
	}
	for _, sev := range []string{"critical", "high", "medium", "low", "info"} {
		if _, ok := rep.Summary[sev]; !ok {
			t.Errorf("summary lacks %s", sev)
		}
	}
	cited := map[string]bool{}
	total := 0
	for _, f := range rep.Findings {
		total++
		if f.Check == "" || f.Title == "" || f.Message == "" || f.Remediation == "" || len(f.Evidence) == 0 {
			t.Errorf("finding incomplete: %+v", f)
		}
		if len(f.Cases) == 0 {
			t.Errorf("finding %q cites no case", f.Title)
		}
		for _, o := range f.Objects {
			if o.APIVersion == "" || o.Kind == "" || o.Name == "" {
				t.Errorf("finding %q has an incomplete object %+v", f.Title, o)
			}
			if o.Kind == "Node" && o.Namespace != "" {
				t.Errorf("cluster-scoped %s has a namespace", o.Name)
			}
		}
		for _, c := range f.Cases {
			cited[c] = true
		}
	}
	sum := 0
	for _, n := range rep.Summary {
		sum += n
	}
	if sum != total {
		t.Errorf("summary counts %d findings, report has %d", sum, total)
	}
	for _, id := range []string{"azure-cni-v2-glibc", "ubuntu-systemd-dns-2022", "daemonset-pull-always-nat-ratelimit", "containerd-chained-cni-regression"} {
		if !cited[id] {
			t.Errorf("the demo shows no finding citing founding case %s", id)
		}
	}
}

func TestAuditExitCodes(t *testing.T) {
	if code, _, _ := runKubegap(t, "audit", "--demo", "--fail-on", "critical", "-q"); code != ExitOK {
		t.Errorf("--fail-on critical: exit %d, want 0 (the demo has no critical finding)", code)
	}
	if code, _, _ := runKubegap(t, "audit", "--demo", "--fail-on", "info", "-q"); code != ExitFindings {
		t.Errorf("--fail-on info: exit %d, want 1", code)
	}
	code, out, _ := runKubegap(t, "audit", "--demo", "--checks", "image-pull-always", "-o", "json")
	if code != ExitFindings || strings.Contains(out, `"check": "host-binary-glibc"`) {
		t.Errorf("--checks did not limit the run (exit %d)", code)
	}
	_, out, _ = runKubegap(t, "audit", "--demo", "--skip-checks", "host-binary-glibc", "-o", "json")
	if strings.Contains(out, `"check": "host-binary-glibc"`) {
		t.Error("--skip-checks ran the skipped check")
	}
}

// TestAuditBadInput: every way the audit cannot run is exit 2, one line on
// stderr naming the problem, nothing on stdout, no file written.
func TestAuditBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("apiVersion: v1\nkind: Node\nmetadata: {name: [x\n"), 0o644)
	nowhere := filepath.Join(dir, "kubeconfig")
	os.WriteFile(nowhere, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: gone, context: {cluster: c, user: u}}]
current-context: gone
`), 0o600)
	snapOut := filepath.Join(dir, "snap.json")
	reportOut := filepath.Join(dir, "report.sarif")
	badConfig := filepath.Join(dir, "bad-config.yaml")
	os.WriteFile(badConfig, []byte("fail-on: high\ncolour: always\n"), 0o644)
	badSuppression := filepath.Join(dir, "bad-suppression.yaml")
	os.WriteFile(badSuppression, []byte("suppressions:\n- check: versoin-skew\n  reason: typo\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"malformed YAML", []string{"audit", "--from", bad}, "bad.yaml: document 1"},
		{"missing file", []string{"audit", "--from", filepath.Join(dir, "none.yaml")}, "none.yaml: no such file"},
		{"unknown check", []string{"audit", "--demo", "--checks", "nope"}, `unknown check "nope"`},
		{"bad severity", []string{"audit", "--demo", "--fail-on", "urgent"}, "--fail-on"},
		{"bad output", []string{"audit", "--demo", "-o", "xml"}, `unknown output format "xml"`},
		{"bad output with a file", []string{"audit", "--demo", "-o", "xml", "--output-file", reportOut}, `unknown output format "xml"`},
		{"bad input with a file", []string{"audit", "--from", bad, "-o", "sarif", "--output-file", reportOut}, "bad.yaml: document 1"},
		{"bad min severity", []string{"audit", "--demo", "--min-severity", "loud"}, "--min-severity"},
		{"fail-on-new alone", []string{"audit", "--demo", "--fail-on-new"}, "--fail-on-new needs --baseline"},
		{"bad colour", []string{"audit", "--demo", "--color", "sometimes"}, "--color"},
		// The path given, not the temporary file written first.
		{"output file in a missing directory", []string{"audit", "--demo", "-o", "json", "--output-file", filepath.Join(dir, "none", "x.json")},
			"--output-file " + filepath.Join(dir, "none", "x.json") + ": no such file or directory"},
		{"unknown config key", []string{"audit", "--demo", "--config", badConfig}, `line 2: unknown key "colour"`},
		{"missing config", []string{"audit", "--demo", "--config", filepath.Join(dir, "none.yaml")}, "--config"},
		{"unknown check in a suppression", []string{"audit", "--demo", "--config", badSuppression}, `unknown check "versoin-skew"`},
		{"bad baseline", []string{"audit", "--demo", "--baseline", bad}, "--baseline"},
		{"unknown flag", []string{"audit", "--bogus"}, "unknown flag"},
		{"demo and from", []string{"audit", "--demo", "--from", bad}, "cannot be combined"},
		{"cluster unreachable", []string{"audit", "--kubeconfig", nowhere, "-q"}, `context "gone"`},
		{"snapshot of an unreachable cluster", []string{"snapshot", "--kubeconfig", nowhere, "-o", snapOut, "-q"}, `context "gone"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runKubegap(t, tc.args...)
			if code != ExitError {
				t.Errorf("exit %d, want 2", code)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if strings.Count(strings.TrimRight(errOut, "\n"), "\n") != 0 || !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr = %q, want one line containing %q", errOut, tc.want)
			}
		})
	}
	for _, f := range []string{snapOut, reportOut} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("a failed run left %s behind", f)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".kubegap-report-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
