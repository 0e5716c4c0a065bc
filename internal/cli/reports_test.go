package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// fixedApp is an App over buffers with a fixed clock and environment.
func fixedApp(env map[string]string) *App {
	return &App{Getenv: func(k string) string { return env[k] },
		Now: func() time.Time { return time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC) }}
}

type jsonReport struct {
	GeneratedAt string
	Tool        struct{ Name, Version string }
	Source      struct {
		Type  string
		Scope struct{ Namespaces []string }
	}
	Findings []struct {
		ID, Check, Severity, Title, Baseline string
		Locations                            []struct {
			File string
			Line int
		}
	}
	Suppressed []struct {
		Finding             struct{ ID, Check string }
		By, Reason, Expires string
		Object              *struct{ Kind, Namespace, Name string }
	}
	Baseline *struct {
		New, Unchanged int
		Resolved       []struct{ ID, Check string }
		NotRechecked   []struct {
			Finding struct{ ID, Check string }
			Why     string
		}
	}
	Warnings []string
	Summary  map[string]int
}

func decode(t *testing.T, out string) jsonReport {
	t.Helper()
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return r
}

func TestAuditEveryOutputFormatToStdoutAndFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range outputNames() {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runWith(t, fixedApp(nil), "audit", "--demo", "-o", name)
			if code != ExitFindings || out == "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			file := filepath.Join(dir, "report."+name)
			code, fileOut, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", name, "--output-file", file)
			written, err := os.ReadFile(file)
			if code != ExitFindings || err != nil || fileOut != "" {
				t.Fatalf("--output-file: exit %d, %v, stdout %q", code, err, fileOut)
			}
			if string(written) != out {
				t.Error("the file differs from standard output")
			}
			switch name {
			case "json", "sarif":
				if !json.Valid(written) {
					t.Error("not JSON")
				}
			case "junit":
				if err := xml.Unmarshal(written, new(struct{})); err != nil {
					t.Error(err)
				}
			case "markdown":
				if !strings.HasPrefix(out, "## kubegap audit") {
					t.Errorf("markdown starts %q", out[:20])
				}
			case "policyreport", "openreports":
				// The objects themselves are judged by the upstream CRDs
				// in test/e2e/reports; here, that the stream is the
				// format's kinds.
				kinds := map[string]string{"policyreport": "kind: ClusterPolicyReport\n", "openreports": "kind: ClusterReport\n"}
				if !strings.Contains(out, kinds[name]) || !strings.Contains(out, "\n---\n") {
					t.Errorf("%s: no cluster report, or a single document:\n%.300s", name, out)
				}
			}
		})
	}
}

func TestAuditReportCarriesTimeVersionScopeAndIDs(t *testing.T) {
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	r := decode(t, out)
	if r.GeneratedAt != "2026-12-01T03:00:00Z" || r.Tool.Name != "kubegap" || r.Tool.Version == "" {
		t.Errorf("generatedAt %q, tool %+v", r.GeneratedAt, r.Tool)
	}
	ids := map[string]bool{}
	for _, f := range r.Findings {
		if !strings.HasPrefix(f.ID, "kg-") || ids[f.ID] {
			t.Errorf("finding %q: ID %q missing or repeated", f.Title, f.ID)
		}
		ids[f.ID] = true
	}
	if !strings.Contains(out, `"scope": {}`) {
		t.Error("the report has no scope")
	}
}

func TestAuditManifestsLocationsSuppressionsAndSkippedFiles(t *testing.T) {
	code, out, errOut := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", "json", "-q")
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	r := decode(t, out)
	if len(r.Suppressed) != 1 || r.Suppressed[0].By != "annotation" || r.Suppressed[0].Object.Name != "metrics-agent" ||
		r.Suppressed[0].Reason != "vendor-managed; tracked in OPS-42" || r.Summary["suppressed"] != 1 {
		t.Errorf("suppressed = %+v, summary %v", r.Suppressed, r.Summary)
	}
	for _, f := range r.Findings {
		if strings.Contains(f.Title, "metrics-agent") {
			t.Errorf("a suppressed finding is still listed: %s", f.Title)
		}
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "kustomization.yaml: skipped") {
		t.Errorf("warnings = %q", r.Warnings)
	}
	// SARIF points at the file and line of each object.
	_, out, _ = runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", "sarif")
	for _, want := range []string{`"uri": "testdata/manifests/base/agents.yaml"`, `"startLine": 3`,
		`"uri": "testdata/manifests/webhook.yaml"`, `"kubegapFindingId/v1"`} {
		if !strings.Contains(out, want) {
			t.Errorf("SARIF lacks %s", want)
		}
	}
	// --strict: the Kustomize file is bad input again.
	code, out, errOut = runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "--strict")
	if code != ExitError || out != "" || !strings.Contains(errOut, "kustomization.yaml") {
		t.Errorf("--strict: exit %d, stderr %q", code, errOut)
	}
}

func TestAuditFailOnNoneAndMinSeverity(t *testing.T) {
	code, _, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--fail-on", "none")
	if code != ExitOK {
		t.Errorf("--fail-on none: exit %d", code)
	}
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json", "--min-severity", "high")
	r := decode(t, out)
	if len(r.Findings) == 0 || r.Summary["medium"] != 0 {
		t.Errorf("--min-severity high: %d findings, summary %v", len(r.Findings), r.Summary)
	}
	for _, f := range r.Findings {
		if f.Severity != "high" && f.Severity != "critical" {
			t.Errorf("a %s finding passed --min-severity high", f.Severity)
		}
	}
	// The filtered report says how many it hid.
	_, all, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	hidden := len(decode(t, all).Findings) - len(r.Findings)
	_, text, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--min-severity", "high", "-o", "summary")
	if want := fmt.Sprintf("; %d below --min-severity not shown", hidden); hidden == 0 || !strings.Contains(strings.Join(strings.Fields(text), " "), want) {
		t.Errorf("--min-severity high hid %d findings; the summary does not say %q:\n%s", hidden, want, text)
	}
	if code, _, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--min-severity", "critical"); code != ExitOK {
		t.Errorf("nothing at or above critical, yet exit %d", code)
	}
}

func TestAuditBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	prev := filepath.Join(dir, "prev.json")
	if code, _, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--skip-checks", "version-skew", "-o", "json", "--output-file", prev); code != ExitFindings {
		t.Fatal("writing the baseline")
	}
	// The same audit against itself: nothing new, --fail-on-new passes.
	code, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--skip-checks", "version-skew", "-o", "json",
		"--baseline", prev, "--fail-on-new", "--fail-on", "info")
	r := decode(t, out)
	if code != ExitOK || r.Baseline == nil || r.Baseline.New != 0 || r.Baseline.Unchanged != len(r.Findings) {
		t.Errorf("same audit: exit %d, baseline %+v", code, r.Baseline)
	}
	// Adding version-skew brings new findings: --fail-on-new fails on them.
	code, out, _ = runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json", "--baseline", prev, "--fail-on-new", "--fail-on", "medium")
	r = decode(t, out)
	newOnes := 0
	for _, f := range r.Findings {
		if f.Baseline == "new" {
			newOnes++
			if f.Check != "version-skew" {
				t.Errorf("%s marked new", f.Check)
			}
		}
	}
	if code != ExitFindings || newOnes == 0 || r.Baseline.New != newOnes {
		t.Errorf("exit %d, %d new, baseline %+v", code, newOnes, r.Baseline)
	}
	// Dropping a check does not resolve its findings: it did not look.
	_, out, _ = runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json", "--baseline", prev, "--skip-checks", "version-skew,node-os-lifecycle")
	r = decode(t, out)
	if len(r.Baseline.Resolved) != 0 || len(r.Baseline.NotRechecked) == 0 {
		t.Errorf("skipping a check: %d resolved, %d not re-checked", len(r.Baseline.Resolved), len(r.Baseline.NotRechecked))
	}
	for _, n := range r.Baseline.NotRechecked {
		if n.Finding.Check != "node-os-lifecycle" || n.Why != "skipped" {
			t.Errorf("%s not re-checked (%s)", n.Finding.Check, n.Why)
		}
	}
}

func TestConfigFileFoundUpwardAndFlagsWin(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "team", "service")
	os.MkdirAll(deep, 0o755)
	os.WriteFile(filepath.Join(root, ".kubegap.yaml"), []byte(`output: json
fail-on: none
min-severity: medium
skip-checks: [webhook-blast-radius]
suppressions:
- check: node-os-lifecycle
  kind: Node
  name: aks-legacy1804-*
  reason: pool retired in Q1
  expires: 2027-03-31
- check: version-skew
  reason: the upgrade finished last week
  expires: 2026-11-30
`), 0o644)
	t.Chdir(deep)
	code, out, errOut := runWith(t, fixedApp(nil), "audit", "--demo")
	if code != ExitOK {
		t.Fatalf("fail-on none from the config: exit %d, %s", code, errOut)
	}
	r := decode(t, out)
	bad := 0
	for _, f := range r.Findings {
		if f.Check == "webhook-blast-radius" || f.Severity == "low" || f.Severity == "info" {
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%d findings the config excludes", bad)
	}
	bySupp := 0
	for _, s := range r.Suppressed {
		if s.By == "config" && s.Reason == "pool retired in Q1" && s.Finding.Check == "node-os-lifecycle" {
			bySupp++
		}
	}
	if bySupp == 0 {
		t.Errorf("no config suppression: %+v", r.Suppressed)
	}
	skew := false
	for _, f := range r.Findings {
		skew = skew || f.Check == "version-skew"
	}
	if !skew || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "expired on 2026-11-30") {
		t.Errorf("expired suppression: version-skew reported %v, warnings %q", skew, r.Warnings)
	}
	// A flag beats the file.
	if code, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "summary", "--fail-on", "high"); code != ExitFindings || strings.HasPrefix(out, "{") {
		t.Errorf("flags did not win: exit %d", code)
	}
	// $XDG_CONFIG_HOME/kubegap/config.yaml when no .kubegap.yaml is found.
	os.Remove(filepath.Join(root, ".kubegap.yaml"))
	xdg := filepath.Join(root, "xdg")
	os.MkdirAll(filepath.Join(xdg, "kubegap"), 0o755)
	os.WriteFile(filepath.Join(xdg, "kubegap", "config.yaml"), []byte("output: yaml\n"), 0o644)
	_, out, _ = runWith(t, fixedApp(map[string]string{"XDG_CONFIG_HOME": xdg}), "audit", "--demo")
	if !strings.HasPrefix(out, "apiVersion: kubegap.dev/v1alpha1") {
		t.Errorf("user config not read: %.40q", out)
	}
}

func TestColourAndWidth(t *testing.T) {
	for _, c := range []struct {
		name     string
		terminal bool
		env      map[string]string
		args     []string
		want     bool
	}{
		{"auto off a terminal", false, nil, nil, false},
		{"auto on a terminal", true, nil, nil, true},
		{"NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, nil, false},
		{"FORCE_COLOR in CI", false, map[string]string{"FORCE_COLOR": "1"}, nil, true},
		{"always", false, nil, []string{"--color", "always"}, true},
		{"never on a terminal", true, map[string]string{"FORCE_COLOR": "1"}, []string{"--color", "never"}, false},
	} {
		app := fixedApp(c.env)
		app.OutIsTerminal = c.terminal
		_, out, _ := runWith(t, app, append([]string{"audit", "--demo"}, c.args...)...)
		if got := strings.Contains(out, "\x1b["); got != c.want {
			t.Errorf("%s: colour %v, want %v", c.name, got, c.want)
		}
	}
	widest := func(out string) (int, []string) {
		n := 0
		var over []string
		for _, l := range strings.Split(out, "\n") {
			w := len([]rune(l))
			n = max(n, w)
			// Only a single unbreakable word (a long field path) may pass 80.
			if w > 80 && strings.Contains(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "evidence:")), " ") {
				over = append(over, l)
			}
		}
		return n, over
	}
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--demo")
	if _, over := widest(out); len(over) > 0 {
		t.Errorf("off a terminal, lines wider than 80:\n%s", strings.Join(over, "\n"))
	}
	app := fixedApp(nil)
	app.OutIsTerminal, app.OutWidth = true, 132
	_, wide, _ := runWith(t, app, "audit", "--demo", "--color", "never")
	if n, _ := widest(wide); n <= 80 || n > 132 && strings.Count(wide, "\n") >= strings.Count(out, "\n") {
		t.Errorf("terminal width 132 not used: widest %d", n)
	}
	_, cols, _ := runWith(t, fixedApp(map[string]string{"COLUMNS": "100"}), "audit", "--demo")
	if strings.Count(cols, "\n") >= strings.Count(out, "\n") {
		t.Error("COLUMNS=100 did not widen the text")
	}
}

func TestInterruptedExits130(t *testing.T) {
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer hang.Close()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "`+hang.URL+`"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: slow, context: {cluster: c, user: u}}]
current-context: slow
`), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var out, errOut bytes.Buffer
	app := fixedApp(nil)
	app.Out, app.ErrOut = &out, &errOut
	code := Run(ctx, app, []string{"audit", "--kubeconfig", kc, "-q"})
	if code != ExitInterrupted || strings.TrimSpace(errOut.String()) != "kubegap: interrupted" || out.Len() != 0 {
		t.Errorf("exit %d, stderr %q, stdout %q", code, errOut.String(), out.String())
	}
}

func TestAuditFromStdin(t *testing.T) {
	app := fixedApp(nil)
	var manifest []byte
	for _, f := range []string{"testdata/manifests/base/agents.yaml", "testdata/manifests/cluster-lists.yaml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		manifest = append(append(manifest, b...), "\n---\n"...)
	}
	app.In = bytes.NewReader(manifest)
	code, out, errOut := runWith(t, app, "audit", "--from", "-", "-o", "json", "--checks", "image-pull-always")
	r := decode(t, out)
	if code == ExitError || len(r.Suppressed) != 1 {
		t.Errorf("exit %d (%s), suppressed %+v", code, errOut, r.Suppressed)
	}
}

func TestKubectlPluginNamesItself(t *testing.T) {
	app := fixedApp(nil)
	app.Name = "kubectl-gap"
	_, out, _ := runWith(t, app, "audit", "--help")
	if !strings.Contains(out, "kubectl gap audit [flags]") {
		t.Errorf("plugin help does not say kubectl gap:\n%s", out)
	}
	_, out, _ = runWith(t, fixedApp(nil), "audit", "--help")
	if !strings.Contains(out, "kubegap audit [flags]") {
		t.Error("plain help changed")
	}
}

func TestCompletionOffersValues(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: prod-eu, context: {cluster: c, user: u}}, {name: staging, context: {cluster: c, user: u}}]
current-context: staging
`), 0o600)
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"audit", "-o", ""}, []string{"sarif", "junit", "markdown", "yaml", "summary"}},
		{[]string{"audit", "--fail-on", ""}, []string{"critical", "none"}},
		{[]string{"audit", "--min-severity", ""}, []string{"info", "high"}},
		{[]string{"audit", "--checks", "version-skew,"}, []string{"version-skew,image-pull-always"}},
		{[]string{"audit", "--kubeconfig", kc, "--context", ""}, []string{"prod-eu", "staging"}},
		{[]string{"cases", "show", ""}, []string{"azure-cni-v2-glibc"}},
		{[]string{"checks", "show", ""}, []string{"host-binary-glibc"}},
		{[]string{"cases", "list", "--component", ""}, []string{"cni-plugin"}},
		{[]string{"cases", "list", "-o", ""}, []string{"json"}},
	} {
		_, out, _ := runWith(t, fixedApp(nil), append([]string{"__complete"}, c.args...)...)
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("completing %q: no %q in\n%s", c.args, w, out)
			}
		}
	}
}

func TestProgressOffTerminalEveryFewSeconds(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var errOut bytes.Buffer
	app := &App{ErrOut: &errOut, Now: func() time.Time { return now }}
	p := newProgress(app)
	pods := snapshotPods()
	for i := range 25 { // one update a second for 25 s
		now = now.Add(time.Second)
		p.update(pods, (i+1)*1000, false)
	}
	p.done()
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 5 || lines[0] != "kubegap: reading pods: 5000 objects (5s)" || strings.Contains(errOut.String(), "\x1b") {
		t.Errorf("progress off a terminal:\n%s", errOut.String())
	}
	// On a terminal: one line rewritten in place.
	errOut.Reset()
	app.ErrIsTerminal = true
	p = newProgress(app)
	now = now.Add(2 * time.Second)
	p.update(pods, 1, true)
	p.done()
	if got := errOut.String(); got != "\r\x1b[Kread pods: 1 object (2s)\r\x1b[K" {
		t.Errorf("terminal progress %q", got)
	}
}

func snapshotPods() snapshot.Resource { return snapshot.Pods }

func TestSnapshotCompletesCheckIDs(t *testing.T) {
	_, out, _ := runWith(t, fixedApp(nil), "__complete", "snapshot", "--skip-checks", "")
	if !strings.Contains(out, "pdb-blocks-drain") {
		t.Errorf("snapshot --skip-checks completion:\n%s", out)
	}
}
