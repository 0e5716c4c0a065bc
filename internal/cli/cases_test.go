package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
)

// The first group of tests runs the real binary path, Run over the embedded
// library and the real check registry. Expectations come from the library
// itself, so they hold as cases are added.

func runKubegap(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &App{Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	code = Run(context.Background(), app, args)
	return code, out.String(), errOut.String()
}

func realLibrary(t *testing.T) *library.Library {
	t.Helper()
	lib, err := library.Default()
	if err != nil {
		t.Fatalf("embedded library does not load: %v", err)
	}
	return lib
}

// caseLine matches one case of a list: ID and date, then the title on the
// same line or, when the ID is long, indented on the next.
var caseLine = regexp.MustCompile(`(?m)^  ([a-z0-9-]+)(?: +|\n +)(\d{4}-\d{2}(?:-\d{2})?)(?: +|\n +)\S`)

func TestCasesListReal(t *testing.T) {
	lib := realLibrary(t)
	n := len(lib.Cases())
	tests := []struct {
		name      string
		args      []string
		wantFirst int // 1-based index of the first case shown
		wantShown int
	}{
		{"default page", []string{"cases", "list"}, 1, min(n, 20)},
		{"bare cases lists too", []string{"cases"}, 1, min(n, 20)},
		{"second small page", []string{"cases", "list", "--limit", "2", "--offset", "1"}, 2, min(2, max(n-1, 0))},
		{"all", []string{"cases", "list", "--limit", "0"}, 1, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runKubegap(t, tt.args...)
			if code != ExitOK || errOut != "" {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			header := fmt.Sprintf("Cases: %d · showing %d to %d of %d\n", n, tt.wantFirst, tt.wantFirst+tt.wantShown-1, n)
			if !strings.HasPrefix(out, header) {
				t.Errorf("output does not start with %q:\n%s", header, out)
			}
			if got := len(caseLine.FindAllString(out, -1)); got != tt.wantShown {
				t.Errorf("%d case lines, want %d:\n%s", got, tt.wantShown, out)
			}
			for _, label := range []string{"by root cause: ", "by component: ", "by symptom: ", "by factor: "} {
				if !strings.Contains(out, "\n"+label) {
					t.Errorf("no %q line", label)
				}
			}
		})
	}
}

func TestCasesListFilterReal(t *testing.T) {
	lib := realLibrary(t)
	c, ok := lib.Case("azure-cni-v2-glibc")
	if !ok {
		t.Fatal("founding case azure-cni-v2-glibc missing")
	}
	want, err := lib.Query(library.Query{RootCauses: []string{c.RootCause.Category}, Components: c.Components[:1]})
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runKubegap(t, "cases", "list", "--root-cause", c.RootCause.Category, "--component", c.Components[0], "--limit", "0")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.HasPrefix(out, fmt.Sprintf("Cases: %d · ", want.Total)) {
		t.Errorf("header does not report %d matches:\n%s", want.Total, out)
	}
	if !strings.Contains(out, "Filter: root cause "+c.RootCause.Category+" · component "+c.Components[0]+"\n") {
		t.Errorf("filter line missing:\n%s", out)
	}
	if !strings.Contains(out, "  azure-cni-v2-glibc ") {
		t.Errorf("azure-cni-v2-glibc not listed:\n%s", out)
	}
}

func TestCasesListJSONReal(t *testing.T) {
	code, out, errOut := runKubegap(t, "cases", "list", "--search", "glibc", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind  string `json:"kind"`
		Total int    `json:"total"`
		Cases []struct {
			ID string `json:"id"`
		} `json:"cases"`
		Facets []library.Facet `json:"facets"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if doc.Kind != "CaseList" || doc.Total < 1 || len(doc.Facets) != 4 {
		t.Errorf("kind %q total %d facets %d", doc.Kind, doc.Total, len(doc.Facets))
	}
	found := false
	for _, c := range doc.Cases {
		found = found || c.ID == "azure-cni-v2-glibc"
	}
	if !found {
		t.Errorf("search glibc did not find azure-cni-v2-glibc: %+v", doc.Cases)
	}
}

func TestCasesShowReal(t *testing.T) {
	lib := realLibrary(t)
	id := "azure-cni-v2-glibc"
	c, _ := lib.Case(id)
	code, out, errOut := runKubegap(t, "cases", "show", id)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, s := range []string{"Summary", "Symptoms", "Trigger", "Root cause", "Contributing factors", "Detection", "Remediation", "Action items", "Lessons", "Detectable read-only", "Unverified", "Sources"} {
		if !strings.Contains(out, "\n"+s+"\n") {
			t.Errorf("section %q missing", s)
		}
	}
	for _, s := range c.Sources {
		if !strings.Contains(out, "["+s.Kind+", "+s.Language+"]") || !strings.Contains(out, s.URL) {
			t.Errorf("source %s not shown with kind and language", s.URL)
		}
		if len(s.Supports) == 0 || !strings.Contains(out, s.URL+"\n    supports: "+s.Supports[0]) {
			t.Errorf("source %s not shown with the sections it supports %v", s.URL, s.Supports)
		}
	}
	if c.Reviewed == "" || !strings.Contains(out, "Reviewed: "+c.Reviewed) {
		t.Errorf("review date %q not shown", c.Reviewed)
	}
	for name := range c.Inferred {
		if !strings.Contains(out, "\nInferred\n") || !strings.Contains(out, "  - "+name+": ") {
			t.Errorf("inferred section %s not shown", name)
		}
	}
	// What the last line says depends on the registry: derive it.
	covering := present.ChecksCiting(checks.All(), id)
	if len(covering) == 0 {
		if !strings.Contains(out, "No kubegap check covers this case yet.") {
			t.Errorf("no check cites %s, but the output does not say so:\n%s", id, out)
		}
	} else {
		ids := make([]string, len(covering))
		for i, ch := range covering {
			ids[i] = ch.ID
		}
		if !strings.Contains(out, "Check your cluster for this: kubegap audit --checks "+strings.Join(ids, ",")) {
			t.Errorf("checks line for %v missing:\n%s", ids, out)
		}
	}
}

func TestCasesShowJSONReal(t *testing.T) {
	code, out, errOut := runKubegap(t, "cases", "show", "ubuntu-systemd-dns-2022", "-o", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind    string           `json:"kind"`
		ID      string           `json:"id"`
		Sources []library.Source `json:"sources"`
		Checks  []string         `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.Kind != "Case" || doc.ID != "ubuntu-systemd-dns-2022" || len(doc.Sources) == 0 || doc.Checks == nil {
		t.Errorf("unexpected document: %+v", doc)
	}
	for _, s := range doc.Sources {
		if len(s.Supports) == 0 {
			t.Errorf("source %s has no supports in the JSON", s.URL)
		}
	}
}

func TestCasesFacetsReal(t *testing.T) {
	lib := realLibrary(t)
	tax := lib.Taxonomy()
	code, out, errOut := runKubegap(t, "cases", "facets")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	flat := strings.Join(strings.Fields(out), " ") // descriptions wrap
	for _, facet := range library.FacetNames() {
		for _, term := range tax.Terms(facet) {
			if !strings.Contains(out, "  "+term.ID+" ") || !strings.Contains(flat, term.Name+": ") {
				t.Errorf("%s value %s missing from facets output", facet, term.ID)
			}
		}
	}
	code, out, _ = runKubegap(t, "cases", "facets", "-o", "json")
	if code != ExitOK {
		t.Fatalf("json: exit %d", code)
	}
	var doc facetsJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Total != len(lib.Cases()) {
		t.Errorf("total %d, library has %d cases", doc.Total, len(lib.Cases()))
	}
	// Each root-cause count must equal the cases that carry it.
	for _, f := range doc.Facets {
		if f.Name != library.FacetRootCause {
			continue
		}
		for _, v := range f.Values {
			want := 0
			for _, c := range lib.Cases() {
				if c.RootCause.Category == v.ID {
					want++
				}
			}
			if v.Count != want {
				t.Errorf("root cause %s: count %d, want %d", v.ID, v.Count, want)
			}
		}
	}
}

func TestCasesErrorsExit2(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown case", []string{"cases", "show", "no-such-case"}, `unknown case "no-such-case"`},
		{"unknown component", []string{"cases", "list", "--component", "toaster"}, `unknown component "toaster" (valid: cni-plugin`},
		{"unknown root cause", []string{"cases", "--root-cause", "bad-luck"}, `unknown rootCause "bad-luck"`},
		{"bad output", []string{"cases", "list", "-o", "yaml"}, `unknown output format "yaml"`},
		{"bad output on show", []string{"cases", "show", "azure-cni-v2-glibc", "-o", "xml"}, `unknown output format "xml"`},
		{"negative offset", []string{"cases", "list", "--offset", "-1"}, "--offset -1 is negative"},
		{"unknown flag", []string{"cases", "list", "--colour"}, "unknown flag: --colour"},
		{"show without id", []string{"cases", "show"}, "kubegap cases show needs a case ID (see 'kubegap cases list')"},
		{"ambiguous prefix", []string{"cases", "show", "a"}, `"a" matches`},
		{"unknown subcommand", []string{"cases", "lst"}, `unknown command "lst"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runKubegap(t, tt.args...)
			if code != ExitError {
				t.Errorf("exit %d, want %d", code, ExitError)
			}
			if out != "" {
				t.Errorf("stdout should be empty, got %q", out)
			}
			if strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "kubegap: ") {
				t.Errorf("stderr is not one line: %q", errOut)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr %q does not mention %q", errOut, tt.want)
			}
		})
	}
}

// The second group runs the commands over a fixture library and fake
// checks, so exact output can be asserted.

const fixtureTaxonomy = `
rootCauses:
- {id: dependency-incompatibility, name: Dependency or ABI incompatibility, description: One needs what another lacks.}
- {id: os-auto-update, name: Uncontrolled OS update, description: Packages updated in place.}
components:
- {id: cni-plugin, name: CNI plugin and installer, description: CNI binaries.}
- {id: node-os, name: Node OS userland, description: systemd and glibc.}
symptoms:
- {id: sandbox-failure, name: Pod sandbox failure, description: Sandboxes fail.}
- {id: dns-failure, name: DNS failure, description: Names do not resolve.}
factors:
- {id: global-rollout, name: Global rollout, description: Everywhere at once.}
`

func fixtureCase(title, date, rootCause, components, symptoms, readOnly string) string {
	return `title: ` + title + `
date: ` + date + `
summary: Summary of ` + title + `.
symptoms: [Pods fail.]
trigger: An upgrade.
rootCause: {category: ` + rootCause + `, text: The cause explained.}
components: [` + components + `]
symptomCategories: [` + symptoms + `]
contributingFactors:
- {category: global-rollout, text: It went everywhere.}
detection: Events showed it.
remediation: [Roll back.]
lessons: [Stage changes.]
sources:
- {url: "https://example.com/` + date + `", title: Report, kind: knowledge-base, language: zh,
   supports: [date, summary, symptoms, trigger, rootCause, contributingFactors, detection, remediation]}
detectable: ` + readOnly + `
inferred: {lessons: our reading of the report}
reviewed: 2026-12-01
`
}

func fixtureDeps(t *testing.T, cs []check.Check) casesDeps {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"taxonomy.yaml":         fixtureTaxonomy,
		"cases/glibc-case.yaml": fixtureCase("Installer binary needs newer glibc", "2026-08-31", "dependency-incompatibility", "cni-plugin, node-os", "sandbox-failure", "{readOnly: true, signal: Compare images with osImage.}"),
		"cases/dns-case.yaml":   fixtureCase("Update removes node DNS", "2022-08-30", "os-auto-update", "node-os", "dns-failure", "{readOnly: true, signal: osImage share., noCheckYet: Needs node age data.}"),
		"cases/hidden-case.yaml": fixtureCase("Kernel panics under load", "2020-01", "os-auto-update", "node-os", "sandbox-failure",
			"{readOnly: false, why: Only the node console shows it.}"),
	}
	if err := os.Mkdir(dir+"/cases", 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(dir+"/"+name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib, err := library.Load(os.DirFS(dir))
	if err != nil {
		t.Fatalf("fixture library: %v", err)
	}
	return casesDeps{
		load:   func() (*library.Library, error) { return lib, nil },
		checks: func() []check.Check { return cs },
	}
}

func runFixture(t *testing.T, deps casesDeps, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd := newCasesCommandWith(&App{Out: &out, ErrOut: &out}, deps)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SilenceUsage = true
	cmd.SilenceErrors = true
	err := cmd.Execute()
	return out.String(), err
}

func TestCasesListTextExact(t *testing.T) {
	deps := fixtureDeps(t, nil)
	out, err := runFixture(t, deps, "list", "--limit", "2")
	if err != nil {
		t.Fatal(err)
	}
	want := `Cases: 3 · showing 1 to 2 of 3

  glibc-case  2026-08-31  Installer binary needs newer glibc
  dns-case    2022-08-30  Update removes node DNS

Next page: add --offset 2

by root cause: os-auto-update 2, dependency-incompatibility 1
by component: node-os 3, cni-plugin 1
by symptom: sandbox-failure 2, dns-failure 1
by factor: global-rollout 3
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestCasesListFilteredAndEmpty(t *testing.T) {
	deps := fixtureDeps(t, nil)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"list", "--symptom", "sandbox-failure", "--component", "cni-plugin"}, []string{"Cases: 1 · showing 1 to 1 of 1\n", "Filter: component cni-plugin · symptom sandbox-failure\n", "  glibc-case  2026-08-31", "by root cause: dependency-incompatibility 1\n"}},
		{[]string{"list", "--root-cause", "dependency-incompatibility,os-auto-update", "--search", "kernel"}, []string{"Cases: 1 · ", `Filter: root cause dependency-incompatibility or os-auto-update · search "kernel"`, "hidden-case"}},
		{[]string{"list", "--search", "nothing-matches-this"}, []string{"Cases: 0 · no case matches\n"}},
		{[]string{"list", "--offset", "10"}, []string{"Cases: 3 · showing none: offset 10 is past the last case\n", "by root cause: "}},
	}
	for _, tt := range tests {
		out, err := runFixture(t, deps, tt.args...)
		if err != nil {
			t.Errorf("%v: %v", tt.args, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%v: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

func TestCasesShowChecksLine(t *testing.T) {
	cs := []check.Check{
		{ID: "zeta-check", Cases: check.Prevents("glibc-case")},
		{ID: "host-binary-glibc", Cases: check.Prevents("other", "glibc-case")},
		{ID: "unrelated", Cases: check.Prevents("dns-case-2")},
	}
	deps := fixtureDeps(t, cs)
	tests := []struct {
		id, want string
	}{
		{"glibc-case", "\nCheck your cluster for this: kubegap audit --checks host-binary-glibc,zeta-check\n"},
		{"dns-case", "\nNo kubegap check covers this case yet. Needs node age data.\n"},
		{"hidden-case", "\nNo kubegap check covers this case yet. The gap cannot be seen read-only from the Kubernetes API.\n"},
	}
	for _, tt := range tests {
		out, err := runFixture(t, deps, "show", tt.id)
		if err != nil {
			t.Fatalf("show %s: %v", tt.id, err)
		}
		if !strings.HasSuffix(out, tt.want) {
			t.Errorf("show %s ends with:\n%s\nwant suffix %q", tt.id, out[max(0, len(out)-200):], tt.want)
		}
	}
	out, err := runFixture(t, deps, "show", "glibc-case")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"glibc-case\nInstaller binary needs newer glibc\nDate: 2026-08-31 · Reviewed: 2026-12-01\n",
		"Root cause:  Dependency or ABI incompatibility (dependency-incompatibility)\n",
		"Components:  CNI plugin and installer (cni-plugin), Node OS userland (node-os)\n",
		"  - Global rollout (global-rollout): It went everywhere.\n",
		"  - [knowledge-base, zh] Report\n    https://example.com/2026-08-31\n    supports: date, summary, symptoms, trigger, rootCause,\n",
		"\nInferred\n  - lessons: our reading of the report\n",
		"\nDetectable read-only\n  Yes. Compare images with osImage.\n",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("show output lacks %q:\n%s", w, out)
		}
	}
	out, err = runFixture(t, deps, "show", "glibc-case", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Checks []string `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Join(doc.Checks, ",") != "host-binary-glibc,zeta-check" {
		t.Errorf("json checks = %v", doc.Checks)
	}
}

func TestCasesUnknownCaseSuggests(t *testing.T) {
	deps := fixtureDeps(t, nil)
	_, err := runFixture(t, deps, "show", "libc")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != ExitError {
		t.Fatalf("error %v is not an exit-2 error", err)
	}
	if !strings.Contains(err.Error(), "did you mean glibc-case?") {
		t.Errorf("error %q does not suggest glibc-case", err)
	}
}

func TestCasesLoadFailureExit2(t *testing.T) {
	deps := casesDeps{
		load:   func() (*library.Library, error) { return nil, errors.New("cases/x.yaml: title is required") },
		checks: func() []check.Check { return nil },
	}
	for _, args := range [][]string{{"list"}, {"show", "x"}, {"facets"}} {
		_, err := runFixture(t, deps, args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != ExitError || !strings.Contains(err.Error(), "cases/x.yaml") {
			t.Errorf("%v: error %v, want exit 2 naming the file", args, err)
		}
	}
}

func TestCasesFacetsTextExact(t *testing.T) {
	out, err := runFixture(t, fixtureDeps(t, nil), "facets")
	if err != nil {
		t.Fatal(err)
	}
	want := `Facets of 3 cases. Filter with kubegap cases list --FLAG VALUE.

Root causes (--root-cause)
  dependency-incompatibility   1  Dependency or ABI incompatibility: One needs
                                  what another lacks.
  os-auto-update               2  Uncontrolled OS update: Packages updated in
                                  place.

Components (--component)
  cni-plugin   1  CNI plugin and installer: CNI binaries.
  node-os      3  Node OS userland: systemd and glibc.

Symptoms (--symptom)
  sandbox-failure   2  Pod sandbox failure: Sandboxes fail.
  dns-failure       1  DNS failure: Names do not resolve.

Contributing factors (--factor)
  global-rollout   3  Global rollout: Everywhere at once.
`
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
}

func TestCaseAndCheckIDsMatchLoosely(t *testing.T) {
	for _, args := range [][]string{
		{"cases", "show", "AZURE-CNI-V2-GLIBC"},
		{"cases", "show", "azure-cni-v2"},
		{"cases", "show", "Azure-CNI"},
	} {
		code, out, errOut := runKubegap(t, args...)
		if code != ExitOK || !strings.HasPrefix(out, "azure-cni-v2-glibc") {
			t.Errorf("%q: exit %d, %s%.40s", args, code, errOut, out)
		}
	}
	code, out, _ := runKubegap(t, "checks", "show", "Version")
	if code != ExitOK || !strings.HasPrefix(out, "version-skew") {
		t.Errorf("checks show Version: exit %d", code)
	}
	if code, _, errOut := runKubegap(t, "checks", "show"); code != ExitError || !strings.Contains(errOut, "needs a check ID") {
		t.Errorf("checks show without ID: exit %d, %q", code, errOut)
	}
}

func TestListsFit80Columns(t *testing.T) {
	// At an 80-column terminal; in a pipe rows stay whole (TestNoCutInAPipe).
	for _, args := range [][]string{{"cases", "list", "--limit", "0"}, {"cases"}, {"checks"}, {"checks", "list"}, {"cases", "facets"}, {"checks", "show", "version-skew"}} {
		code, out, _ := runWith(t, &App{OutIsTerminal: true, OutWidth: 80}, args...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d", args, code)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := len([]rune(line)); n > 80 {
				t.Errorf("%q: a line of %d columns: %q", args, n, line)
			}
		}
	}
	_, out, _ := runKubegap(t, "checks")
	if !strings.HasPrefix(out, "Checks: ") || !strings.Contains(out, "  version-skew ") {
		t.Errorf("bare checks does not list:\n%s", out)
	}
}
