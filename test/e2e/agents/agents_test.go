// Package agents_test runs 'kubegap mcp' under the clients coding agents
// use, at the versions hack/test.sh pins: MCP Inspector's CLI (tools/list
// with its --strict schema check, tools/call on every tool), Claude Code
// (claude mcp add and list, claude plugin validate on this repository) and
// Codex (codex mcp add and list). Each client runs with a throwaway home
// and config directory, no API key and none of the caller's environment.
//
// hack/test.sh installs the clients and sets KUBEGAP_AGENT_CLIENTS to the
// directory of their executables; with it set, a missing client fails the
// test. Without it (a plain go test), the tests skip and say how to run
// them.
package agents_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// The clients' executables, as npm links them into node_modules/.bin.
var clientBinaries = []string{"node", "mcp-inspector", "claude", "codex"}

// clients returns the directory of the agent clients' executables.
func clients(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KUBEGAP_AGENT_CLIENTS")
	if dir == "" {
		t.Skip("KUBEGAP_AGENT_CLIENTS is not set: hack/test.sh installs MCP Inspector, Claude Code and Codex " +
			"from npm and sets it; or set it to a node_modules/.bin holding " + strings.Join(clientBinaries, ", "))
	}
	for _, name := range clientBinaries {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Fatalf("KUBEGAP_AGENT_CLIENTS=%s lacks %s: %v", dir, name, err)
		}
	}
	return dir
}

// client runs one agent client.
type client struct {
	dir  string // the clients' executables
	home string // a throwaway HOME, config and cache
}

func newClient(t *testing.T) *client {
	c := &client{dir: clients(t), home: t.TempDir()}
	// Codex refuses a CODEX_HOME that does not exist.
	if err := os.Mkdir(filepath.Join(c.home, ".codex"), 0o700); err != nil {
		t.Fatal(err)
	}
	return c
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs name args in workdir (the home when empty) with an environment
// of its own: the clients first on PATH (so their scripts get the pinned
// Node), the throwaway home for every config and cache they write, their
// updaters and telemetry off, and no credentials of any kind.
func (c *client) run(t *testing.T, workdir, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.dir, name), args...)
	cmd.Dir = workdir
	if cmd.Dir == "" {
		cmd.Dir = c.home
	}
	cmd.Env = []string{
		"PATH=" + c.dir + string(os.PathListSeparator) + "/usr/local/bin:/usr/bin:/bin",
		"HOME=" + c.home,
		"XDG_CONFIG_HOME=" + filepath.Join(c.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(c.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(c.home, ".local", "share"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(c.home, ".claude"),
		"CODEX_HOME=" + filepath.Join(c.home, ".codex"),
		"MCP_CATALOG_PATH=" + filepath.Join(c.home, "mcp-catalog.json"),
		// kubegap mcp, started by a client, must read no kubeconfig of the
		// caller's.
		"KUBECONFIG=" + filepath.Join(c.home, "no-kubeconfig"),
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DO_NOT_TRACK=1",
		"NO_COLOR=1",
		"TERM=dumb",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %v: %v\nstderr:\n%s", name, args, err, r.stderr)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %v: no answer within 3 minutes\nstdout:\n%s\nstderr:\n%s", name, args, r.stdout, r.stderr)
	}
	return r
}

// inspector runs the MCP Inspector's CLI against 'kubegap mcp serverArgs'
// and decodes its JSON envelope.
func (c *client) inspector(t *testing.T, inspectorArgs, serverArgs []string) (map[string]any, result) {
	t.Helper()
	args := append([]string{"--cli", "--format", "json"}, inspectorArgs...)
	args = append(append(args, "--", testcluster.Kubegap(t), "mcp"), serverArgs...)
	r := c.run(t, "", "mcp-inspector", args...)
	var env map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &env); err != nil {
		t.Fatalf("mcp-inspector %v: exit %d, output is not JSON: %v\nstdout:\n%s\nstderr:\n%s", inspectorArgs, r.code, err, r.stdout, r.stderr)
	}
	return env, r
}

// TestInspectorToolsListStrict: the Inspector lists every tool, and its
// --strict schema-portability check finds no error and no warning (it
// reported 41 warnings before nullable types became anyOf).
func TestInspectorToolsListStrict(t *testing.T) {
	c := newClient(t)
	env, r := c.inspector(t, []string{"--strict", "--method", "tools/list"}, []string{"--allow-registry"})
	if r.code != 0 {
		t.Fatalf("tools/list --strict: exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if findings, ok := env["schemaFindings"]; ok {
		b, _ := json.MarshalIndent(findings, "", "  ")
		t.Errorf("--strict reports schema findings:\n%s", b)
	}
	if strings.Contains(r.stderr, "Warning") || strings.Contains(r.stderr, "error") {
		t.Errorf("--strict wrote:\n%s", r.stderr)
	}
	res, _ := env["result"].(map[string]any)
	tools, _ := res["tools"].([]any)
	var names []string
	for _, tool := range tools {
		m, _ := tool.(map[string]any)
		name, _ := m["name"].(string)
		names = append(names, name)
		if m["inputSchema"] == nil || m["outputSchema"] == nil || m["description"] == "" {
			t.Errorf("%s: schema or description missing", name)
		}
	}
	sort.Strings(names)
	want := []string{"audit", "explain_check", "get_case", "get_finding", "inspect_image", "list_checks", "search_cases"}
	if !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}
}

// TestInspectorCallsEveryTool calls each tool through the Inspector. Each
// call starts a new server, so the calls that name an earlier audit (and
// inspect_image, which would contact a registry) are checked on their
// error path: a tool error, never a protocol error.
func TestInspectorCallsEveryTool(t *testing.T) {
	c := newClient(t)
	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	fixture := filepath.Join(repo, "internal", "checks", "registries", "testdata", "image-pull-always", "gap.yaml")
	for _, tc := range []struct {
		name      string
		tool      string
		args      []string
		server    []string
		toolError string // substring of the tool error; "" for success
		check     func(t *testing.T, structured map[string]any, text string)
	}{
		{name: "audit demo", tool: "audit", args: []string{"demo=true"}, check: func(t *testing.T, s map[string]any, text string) {
			if id, _ := s["audit_id"].(string); id == "" || !strings.Contains(text, id) {
				t.Errorf("audit_id %q, text %q", id, text)
			}
			if f, _ := s["findings"].([]any); len(f) == 0 {
				t.Error("no findings on the demo's first page")
			}
		}},
		{name: "audit files", tool: "audit", args: []string{`files=["` + fixture + `"]`, `checks=["image-pull-always"]`, "min_severity=high"}, check: func(t *testing.T, s map[string]any, _ string) {
			f, _ := s["findings"].([]any)
			first, _ := f[0].(map[string]any)
			if len(f) == 0 || first["check"] != "image-pull-always" {
				t.Errorf("findings %v, want image-pull-always", f)
			}
		}},
		{name: "audit target_version", tool: "audit", args: []string{"demo=true", `target_version="1.36"`, "page_size=1"}, check: func(t *testing.T, s map[string]any, _ string) {
			if s["next_cursor"] == nil || s["page_size"] != float64(1) {
				t.Errorf("page_size %v next_cursor %v", s["page_size"], s["next_cursor"])
			}
		}},
		// The Inspector reads target_version=1.36 as a JSON number (it
		// parses each value as a JSON scalar): the same preflight as the
		// string; 1.40, which arrives as 1.4, is refused with what to send.
		{name: "audit target_version as a number", tool: "audit", args: []string{"demo=true", "target_version=1.36", "page_size=1"}, check: func(t *testing.T, s map[string]any, _ string) {
			if plan, _ := s["plan"].([]any); len(plan) == 0 {
				t.Errorf("no upgrade plan for target_version=1.36: %v", s)
			}
		}},
		{name: "audit target_version 1.40 as a number", tool: "audit", args: []string{"demo=true", "target_version=1.40"}, toolError: `pass the version as a string, e.g. "1.40"`},
		{name: "get_finding", tool: "get_finding", args: []string{"audit_id=A1-000000", "finding_id=F1"}, toolError: "call audit first"},
		{name: "list_checks", tool: "list_checks", check: func(t *testing.T, s map[string]any, text string) {
			if l, _ := s["checks"].([]any); len(l) < 50 || !strings.Contains(text, "host-binary-glibc") {
				t.Errorf("%d checks; text %q", len(l), text)
			}
		}},
		{name: "explain_check by prefix", tool: "explain_check", args: []string{"id=HOST-BINARY"}, check: func(t *testing.T, s map[string]any, _ string) {
			if s["id"] != "host-binary-glibc" {
				t.Errorf("explain_check HOST-BINARY gave %v", s["id"])
			}
		}},
		{name: "explain_check in an audit", tool: "explain_check", args: []string{"id=version-skew", "audit_id=A1-000000"}, toolError: "unknown audit_id"},
		{name: "search_cases", tool: "search_cases", args: []string{"search=glibc", "limit=2"}, check: func(t *testing.T, s map[string]any, _ string) {
			if l, _ := s["cases"].([]any); len(l) == 0 || s["total"] == float64(0) {
				t.Errorf("search glibc: %v", s)
			}
		}},
		{name: "get_case by prefix", tool: "get_case", args: []string{"id=Azure-CNI-V2"}, check: func(t *testing.T, s map[string]any, _ string) {
			if s["id"] != "azure-cni-v2-glibc" {
				t.Errorf("get_case Azure-CNI-V2 gave %v", s["id"])
			}
		}},
		{name: "inspect_image", tool: "inspect_image", args: []string{"reference= "}, server: []string{"--allow-registry"}, toolError: "reference is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"--method", "tools/call", "--tool-name", tc.tool}
			if len(tc.args) > 0 {
				args = append(append(args, "--tool-arg"), tc.args...)
			}
			env, r := c.inspector(t, args, tc.server)
			res, _ := env["result"].(map[string]any)
			var text string
			content, _ := res["content"].([]any)
			for _, block := range content {
				if m, _ := block.(map[string]any); m["type"] == "text" {
					text, _ = m["text"].(string)
				}
			}
			if tc.toolError != "" {
				if res["isError"] != true || !strings.Contains(text, tc.toolError) || r.code == 0 {
					t.Errorf("want a tool error mentioning %q; exit %d, result %v", tc.toolError, r.code, res)
				}
				return
			}
			if r.code != 0 || res["isError"] == true {
				t.Fatalf("exit %d, result %v\nstderr:\n%s", r.code, res, r.stderr)
			}
			structured, _ := res["structuredContent"].(map[string]any)
			if structured == nil || text == "" {
				t.Fatalf("want structured content and a text summary: %v", res)
			}
			// The text is a summary, not the structured content again.
			var asJSON any
			if json.Unmarshal([]byte(text), &asJSON) == nil {
				t.Errorf("the text content is JSON, a second copy of the payload")
			}
			tc.check(t, structured, text)
		})
	}
}

// TestClaudeCode: 'claude mcp add' registers the server and 'claude mcp
// list' connects to it (an MCP initialize, no API key involved), and
// 'claude plugin validate' accepts this repository as a plugin for the
// plugin directory, warnings included.
func TestClaudeCode(t *testing.T) {
	c := newClient(t)
	bin := testcluster.Kubegap(t)
	project := filepath.Join(c.home, "project")
	if err := os.Mkdir(project, 0o755); err != nil {
		t.Fatal(err)
	}
	if r := c.run(t, project, "claude", "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "2.") {
		t.Fatalf("claude --version: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := c.run(t, project, "claude", "mcp", "add", "kubegap", "--", bin, "mcp"); r.code != 0 {
		t.Fatalf("claude mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := c.run(t, project, "claude", "mcp", "list")
	if want := "kubegap: " + bin + " mcp - ✔ Connected"; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("claude mcp list: exit %d, want %q in:\n%s%s", r.code, want, r.stdout, r.stderr)
	}

	repo, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	r = c.run(t, "", "claude", "plugin", "validate", repo, "--profile", "directory", "--strict")
	if r.code != 0 || !strings.Contains(r.stdout, "Validation passed") {
		t.Errorf("claude plugin validate --profile directory --strict: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, problem := range []string{"LICENSE_MISSING", "ICON_MISSING", "has no line that installs"} {
		if strings.Contains(r.stdout+r.stderr, problem) {
			t.Errorf("claude plugin validate still reports %s:\n%s", problem, r.stdout)
		}
	}
}

// TestCodex: 'codex mcp add' writes the server into its config and 'codex
// mcp list' shows it enabled with the command given.
func TestCodex(t *testing.T) {
	c := newClient(t)
	bin := testcluster.Kubegap(t)
	if r := c.run(t, "", "codex", "mcp", "add", "kubegap", "--", bin, "mcp"); r.code != 0 {
		t.Fatalf("codex mcp add: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := c.run(t, "", "codex", "mcp", "list", "--json")
	if r.code != 0 {
		t.Fatalf("codex mcp list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var servers []struct {
		Name      string `json:"name"`
		Enabled   bool   `json:"enabled"`
		Transport struct {
			Type    string   `json:"type"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"transport"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &servers); err != nil {
		t.Fatalf("codex mcp list --json: %v\n%s", err, r.stdout)
	}
	if len(servers) != 1 || servers[0].Name != "kubegap" || !servers[0].Enabled || servers[0].Transport.Type != "stdio" ||
		servers[0].Transport.Command != bin || !slices.Equal(servers[0].Transport.Args, []string{"mcp"}) {
		t.Errorf("codex mcp list: %+v", servers)
	}
	if r := c.run(t, "", "codex", "mcp", "list"); r.code != 0 || !strings.Contains(r.stdout, "kubegap") || !strings.Contains(r.stdout, "enabled") {
		t.Errorf("codex mcp list: exit %d\n%s", r.code, r.stdout)
	}
}
