package cli

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/mcp"
	"github.com/kubegap/kubegap/internal/present"
)

// TestSuggestedCommandsRun collects every kubegap command the tool prints
// or serves and runs each against the demo: it must exit 0 (nothing at or
// above --fail-on) or 1 (findings), never 2 (could not run).
//
// Where commands are collected:
//   - README.md and docs/*.md: fenced code blocks and `inline code`;
//   - `cases show` of every case and `checks show` of every check;
//   - the static site (`kubegap site`): every <code> and <pre> of every
//     page, case pages ("Check your cluster for this", the agent prompt),
//     check pages and the library's --checks panel;
//   - reports: the text report of the demo and of files (TO COMPLETE
//     lines, remediations), and the JSON report's remediations and notes;
//   - the MCP server's instructions, tool descriptions and prompts.
//
// Within those, a command starts at "kubegap <subcommand>" inside code
// (backticks, single quotes, a code element, a fenced line) or after a
// label ("run it: ", "read: "), and runs for as long as its words are
// that subcommand's flags, their values and its positional arguments:
// "read: kubegap cases show X or URL" is "kubegap cases show X".
//
// How a command is run (the substitution rule):
//   - a command that reads a live cluster (audit without --from or
//     --demo) runs with --demo instead, dropping --context and
//     --kubeconfig and their values;
//   - --from PATH with a PATH that does not exist reads the demo's
//     cluster files instead; --from - gets them on standard input;
//   - --baseline FILE that does not exist gets the demo's JSON report;
//   - --output-file, --output of snapshot and site, and -o of snapshot
//     and site write into a temporary directory;
//   - a usage line with placeholders (ID, DIR, FILE, REF, 1.N, …, [ ],
//     a|b) is a synopsis, not a command, and is not run;
//   - serve and mcp run until stopped, snapshot reads only a live
//     cluster (the e2e tests run it), and image inspect contacts a
//     registry: they are listed, not run.
func TestSuggestedCommandsRun(t *testing.T) {
	if want := nextMinor(t, demo.ServerVersion); present.PreflightTarget != want {
		t.Fatalf("present.PreflightTarget %s, want %s: the demo's next minor, so preflight commands run on it", present.PreflightTarget, want)
	}
	found := map[string][]string{} // command -> where it was found
	add := func(where string, cmds []string) {
		for _, c := range cmds {
			if !slices.Contains(found[c], where) {
				found[c] = append(found[c], where)
			}
		}
	}
	root := NewRootCommand(&App{Out: new(bytes.Buffer), ErrOut: new(bytes.Buffer), Getenv: func(string) string { return "" }})

	// Documentation.
	docs, _ := filepath.Glob("../../docs/*.md")
	for _, p := range append(docs, "../../README.md") {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		add(filepath.Base(p), markdownCommands(root, string(b)))
	}

	// cases show and checks show.
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range lib.Cases() {
		add("cases show "+c.ID, textCommands(root, mustRun(t, "cases", "show", c.ID)))
	}
	for _, c := range checks.All() {
		add("checks show "+c.ID, textCommands(root, mustRun(t, "checks", "show", c.ID)))
	}

	// The static site.
	site := t.TempDir()
	mustRun(t, "site", "-o", site)
	codeRE := regexp.MustCompile(`(?s)<(code|pre)[^>]*>(.*?)</(code|pre)>`)
	tagRE := regexp.MustCompile(`<[^>]+>`)
	pages := 0
	err = filepath.WalkDir(site, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		pages++
		rel, _ := filepath.Rel(site, p)
		for _, m := range codeRE.FindAllStringSubmatch(string(b), -1) {
			add("site "+rel, codeCommands(root, html.UnescapeString(tagRE.ReplaceAllString(m[2], ""))))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if pages < len(lib.Cases()) {
		t.Fatalf("the site has %d pages for %d cases", pages, len(lib.Cases()))
	}

	// Reports: the demo, and files (whose TO COMPLETE lines say how to
	// complete them).
	for _, args := range [][]string{
		{"audit", "--demo"},
		{"audit", "--demo", "--target-version", present.PreflightTarget},
		{"audit", "--from", "../demo/cluster"},
		{"audit", "--from", "../checks/testdata/managed/aks"},
		{"audit", "--from", "../checks/versions/testdata/node-os-lifecycle/eol.yaml"},
	} {
		where := "kubegap " + strings.Join(args, " ")
		add(where, textCommands(root, mustRun(t, args...)))
		add(where+" -o json", textCommands(root, mustRun(t, append(args, "-o", "json")...)))
	}

	// The MCP server.
	add("mcp", textCommands(root, mcpTexts(t)))

	if len(found) < 20 {
		t.Fatalf("only %d commands found: the collection is broken", len(found))
	}
	env := newCommandEnv(t)
	cmds := slices.Sorted(func(yield func(string) bool) {
		for c := range found {
			if !yield(c) {
				return
			}
		}
	})
	var ran, listed int
	for _, c := range cmds {
		args, why := env.runnable(root, c)
		if why != "" {
			listed++
			t.Logf("not run (%s): %s", why, c)
			continue
		}
		ran++
		code, out, errOut := env.run(args)
		if code != ExitOK && code != ExitFindings {
			t.Errorf("exit %d: %s\n  run as: kubegap %s\n  found in: %s\n  stderr: %s\n  stdout: %.300s",
				code, c, strings.Join(args, " "), strings.Join(found[c], "; "), strings.TrimSpace(errOut), out)
		}
	}
	t.Logf("%d distinct commands found, %d run, %d listed only", len(found), ran, listed)
	if testing.Verbose() {
		for _, c := range cmds {
			t.Logf("found: %s  (in %s)", c, strings.Join(found[c][:min(3, len(found[c]))], "; "))
		}
	}
	for _, must := range []string{"kubegap audit --checks upgrade-preflight --target-version " + present.PreflightTarget} {
		if _, ok := found[must]; !ok {
			t.Errorf("%q not among the commands found: the collection missed checks show upgrade-preflight", must)
		}
	}
}

func nextMinor(t *testing.T, version string) string {
	v, ok := check.ParseKubeVersion(version)
	if !ok {
		t.Fatalf("bad version %q", version)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor+1)
}

// mustRun runs kubegap in-process with a wide terminal (no wrapping, so
// commands stay on one line) and returns its standard output and error.
func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &App{Out: &out, ErrOut: &errOut, Getenv: func(k string) string {
		if k == "COLUMNS" {
			return "100000"
		}
		return ""
	}}
	if code := Run(context.Background(), app, args); code != ExitOK && code != ExitFindings {
		t.Fatalf("kubegap %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String() + "\n" + errOut.String()
}

// mcpTexts is what the MCP server shows an agent: its instructions, tool
// descriptions and input schemas, and its prompts.
func mcpTexts(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serverT, clientT := sdk.NewInMemoryTransports()
	srv := mcp.NewServer(mcp.Options{})
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, serverT) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close(); cancel(); <-done }()
	var b strings.Builder
	if init := cs.InitializeResult(); init != nil {
		b.WriteString(init.Instructions + "\n")
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		fmt.Fprintf(&b, "%s\n%s\n%v\n", tl.Title, tl.Description, tl.InputSchema)
	}
	if init := cs.InitializeResult(); init != nil && init.Capabilities != nil && init.Capabilities.Prompts != nil {
		prompts, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range prompts.Prompts {
			fmt.Fprintf(&b, "%s\n%s\n", p.Title, p.Description)
		}
	}
	return b.String()
}

// markdownCommands finds commands in a Markdown file's fenced code
// blocks (every line) and inline code spans.
func markdownCommands(root *cobra.Command, text string) []string {
	var out []string
	inFence := false
	inline := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(text, "\n") {
		trim := strings.TrimSpace(line)
		if strings.HasPrefix(trim, "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			out = append(out, codeCommands(root, trim)...)
			continue
		}
		for _, m := range inline.FindAllStringSubmatch(line, -1) {
			out = append(out, codeCommands(root, m[1])...)
		}
	}
	return out
}

// textCommands finds commands in a program's output: in backticks or
// single quotes, at the start of a line, or after a label's ": ".
func textCommands(root *cobra.Command, text string) []string {
	var out []string
	quoted := regexp.MustCompile("[`']([^`']*kubegap [^`']+)[`']")
	for _, line := range strings.Split(strings.ReplaceAll(text, `\n`, "\n"), "\n") {
		for _, m := range quoted.FindAllStringSubmatch(line, -1) {
			out = append(out, codeCommands(root, m[1])...)
		}
		line = strings.TrimSpace(line)
		for i := 0; ; {
			j := strings.Index(line[i:], "kubegap ")
			if j < 0 {
				break
			}
			at := i + j
			if at == 0 || strings.HasSuffix(line[:at], ": ") {
				out = append(out, commandAt(root, line[at:])...)
			}
			i = at + len("kubegap ")
		}
	}
	return out
}

// codeCommands finds every command in a piece of code.
func codeCommands(root *cobra.Command, code string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(code[i:], "kubegap ")
		if j < 0 {
			return out
		}
		at := i + j
		out = append(out, commandAt(root, code[at:])...)
		i = at + len("kubegap ")
	}
}

// commandAt reads the command that starts at s ("kubegap ..."): the
// subcommand's words, then its flags, their values and its positional
// arguments, up to the first word that is none of these. Nothing when
// the word after kubegap is not a subcommand ("kubegap reads ...").
func commandAt(root *cobra.Command, s string) []string {
	words := shellWords(s)[1:]
	for i, w := range words {
		if w == "#" || w == ">" || w == "&&" || w == "|" || w == ";" {
			words = words[:i]
			break
		}
	}
	if len(words) == 0 {
		return nil
	}
	cmd, rest, err := root.Find(words)
	if err != nil || cmd == root {
		return nil
	}
	path := strings.Fields(cmd.CommandPath())[1:]
	taken := append([]string{"kubegap"}, path...)
	positional, variadic := usageArgs(cmd)
	for i := 0; i < len(rest); i++ {
		w := rest[i]
		if strings.HasPrefix(w, "-") && w != "-" {
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			known, needsValue := lookupFlag(cmd, name, !strings.HasPrefix(w, "--"))
			if !known {
				break
			}
			taken = append(taken, w)
			if !hasValue && needsValue && i+1 < len(rest) {
				i++
				taken = append(taken, rest[i])
			}
			continue
		}
		if positional == 0 && !variadic {
			break
		}
		positional--
		taken = append(taken, w)
	}
	// A sentence's full stop or comma is not part of the last word; an
	// ellipsis is a placeholder and stays.
	if last := &taken[len(taken)-1]; !strings.Contains(*last, "...") {
		if trimmed := strings.TrimRight(*last, ".,;:)"); trimmed != "" {
			*last = trimmed
		}
	}
	for i, w := range taken {
		if strings.ContainsAny(w, " \t") {
			taken[i] = `"` + w + `"`
		}
	}
	return []string{strings.Join(taken, " ")}
}

// lookupFlag reports whether cmd has the flag, and whether it takes a
// value (a bool flag does not).
// shellWords splits a command line as a shell would, for what matters
// here: words are separated by spaces, "..." and '...' quote, and a
// backtick, an angle bracket, a pipe or a semicolon ends the command, as
// does a quote left open.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
			continue
		case r == '"' || r == '\'':
			quote, inWord = r, true
			continue
		case r == '`' || r == '<' || r == '|' || r == ';':
			if inWord {
				words = append(words, cur.String())
			}
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			continue
		}
		cur.WriteRune(r)
		inWord = true
	}
	if quote != 0 {
		return words // the quoted word never closed: not part of the command
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func lookupFlag(cmd *cobra.Command, name string, short bool) (known, needsValue bool) {
	f := cmd.Flags().Lookup(name)
	if short {
		f = nil
		if len(name) == 1 {
			f = cmd.Flags().ShorthandLookup(name)
		}
	}
	if f == nil {
		return false, false
	}
	return true, f.NoOptDefVal == ""
}

// usageArgs counts the positional arguments in a command's Use line
// ("show ID": 1; "inspect REF | --tarball PATH": 1), and whether they may
// repeat ("...").
func usageArgs(cmd *cobra.Command) (n int, variadic bool) {
	words := strings.Fields(cmd.Use)[1:]
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "[flags]" || w == "|":
		case strings.HasPrefix(w, "-"):
			i++ // the flag's value
		case strings.Contains(w, "..."):
			variadic = true
		default:
			n++
		}
	}
	return n, variadic
}

// commandEnv is where suggested commands run: a temporary directory for
// what they write, and the demo's files and report for what they read.
type commandEnv struct {
	dir      string
	demoDir  string
	baseline string
}

func newCommandEnv(t *testing.T) *commandEnv {
	dir := t.TempDir()
	demoDir, err := filepath.Abs("../demo/cluster")
	if err != nil {
		t.Fatal(err)
	}
	baseline := filepath.Join(dir, "baseline.json")
	mustRun(t, "audit", "--demo", "-o", "json", "--output-file", baseline, "--fail-on", "none")
	return &commandEnv{dir: dir, demoDir: demoDir, baseline: baseline}
}

var placeholder = regexp.MustCompile(`^\[|\]$|…|\.\.\.|^[A-Z][A-Z0-9-]*$|\|.|^1\.N$`)

// runnable turns a suggested command into the arguments it runs with,
// or says why it is not run (see the rule in TestSuggestedCommandsRun).
func (e *commandEnv) runnable(root *cobra.Command, command string) (args []string, notRun string) {
	words := shellWords(command)[1:]
	for _, w := range words {
		for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == ',' || r == '=' }) {
			if placeholder.MatchString(part) {
				return nil, "a synopsis with placeholders"
			}
		}
	}
	cmd, _, err := root.Find(words)
	if err != nil {
		return nil, "no such command: " + err.Error()
	}
	switch strings.TrimPrefix(cmd.CommandPath(), "kubegap ") {
	case "serve", "mcp", "exporter":
		return nil, "a server that runs until stopped"
	case "snapshot":
		return nil, "reads a live cluster only (the e2e tests run it)"
	case "publish":
		return nil, "writes report objects into a live cluster (test/e2e/reports runs it)"
	case "image inspect":
		return nil, "reads an image from a registry, or from a tarball the docs do not ship"
	}
	if slices.ContainsFunc(words, func(w string) bool { return w == "--pushgateway" || strings.HasPrefix(w, "--pushgateway=") }) {
		return nil, "pushes to the Pushgateway it names (test/e2e/prometheus pushes to a real one)"
	}
	isAudit := cmd.Name() == "audit"
	for _, w := range words {
		if name, _, _ := strings.Cut(w, "="); isAudit && (name == "--contexts" || name == "--all-contexts") {
			return nil, "audits several live clusters (test/e2e/fleet runs it)"
		}
	}
	live := isAudit
	for i := 0; i < len(words); i++ {
		w := words[i]
		name, value, inline := strings.Cut(w, "=")
		takeValue := func() string {
			if inline {
				return value
			}
			if i+1 < len(words) {
				i++
				return words[i]
			}
			return ""
		}
		switch name {
		case "--context", "--kubeconfig", "--cluster", "--user":
			if isAudit {
				takeValue()
				continue
			}
		case "--demo":
			live = false
		case "--from", "-f":
			live = false
			p := takeValue()
			if _, err := os.Stat(p); p != "-" && err != nil {
				p = e.demoDir
			}
			args = append(args, "--from", p)
			continue
		case "--baseline":
			p := takeValue()
			if _, err := os.Stat(p); err != nil {
				p = e.baseline
			}
			args = append(args, "--baseline", p)
			continue
		case "--output-file":
			args = append(args, "--output-file", filepath.Join(e.dir, filepath.Base(takeValue())))
			continue
		case "-o", "--output":
			if cmd.Name() == "site" {
				args = append(args, "-o", filepath.Join(e.dir, "site-"+filepath.Base(takeValue())))
				continue
			}
		}
		args = append(args, w)
	}
	if live {
		args = append(args, "--demo")
	}
	return args, ""
}

// run runs the arguments in-process, in no particular directory: every
// path they name is absolute or was rewritten into the temporary one.
func (e *commandEnv) run(args []string) (int, string, string) {
	var out, errOut bytes.Buffer
	app := &App{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	if slices.Contains(args, "-") {
		var in bytes.Buffer
		files, _ := filepath.Glob(filepath.Join(e.demoDir, "*.yaml"))
		sort.Strings(files)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			in.Write(b)
			in.WriteString("\n---\n")
		}
		app.In = &in
	}
	code := Run(context.Background(), app, args)
	return code, out.String(), errOut.String()
}
