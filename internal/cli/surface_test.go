package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/report/reporttest"
)

type placedObject struct {
	Kind, Namespace, Name, File string
	Line                        int
}

type placedReport struct {
	Findings []struct {
		ID        string
		Objects   []placedObject
		Locations []struct {
			Object placedObject
			File   string
			Line   int
		}
	}
}

// TestFileLineOnObjectReferences: in JSON and YAML each object reference
// read from a file carries that file and line itself, the same as its
// entry in locations; the line is where the file defines that object; a
// report read back as a baseline still matches its own findings.
func TestFileLineOnObjectReferences(t *testing.T) {
	for _, format := range []string{"json", "yaml"} {
		_, out, errOut := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", format, "-q")
		b := []byte(out)
		if format == "yaml" {
			var err error
			if b, err = yaml.YAMLToJSON(b); err != nil {
				t.Fatalf("-o yaml: %v", err)
			}
		}
		var r placedReport
		if err := json.Unmarshal(b, &r); err != nil || len(r.Findings) == 0 {
			t.Fatalf("-o %s: %v (%s)", format, err, errOut)
		}
		placed := 0
		for _, f := range r.Findings {
			for _, o := range f.Objects {
				var loc *struct {
					Object placedObject
					File   string
					Line   int
				}
				for i := range f.Locations {
					if l := &f.Locations[i]; l.Object.Kind == o.Kind && l.Object.Namespace == o.Namespace && l.Object.Name == o.Name {
						loc = l
					}
				}
				switch {
				case loc == nil && (o.File != "" || o.Line != 0):
					t.Errorf("-o %s: %s %s/%s has file %s:%d but no location", format, o.Kind, o.Namespace, o.Name, o.File, o.Line)
				case loc != nil && (o.File != loc.File || o.Line != loc.Line):
					t.Errorf("-o %s: %s %s/%s at %s:%d, its location says %s:%d", format, o.Kind, o.Namespace, o.Name, o.File, o.Line, loc.File, loc.Line)
				case loc != nil:
					placed++
					if o.Line > 0 {
						checkDefinedAt(t, o)
					}
				}
				if loc != nil && (loc.Object.File != "" || loc.Object.Line != 0) {
					t.Errorf("-o %s: a location's own object carries file and line", format)
				}
			}
		}
		if placed == 0 {
			t.Fatalf("-o %s: no object reference carries a file:\n%s", format, out)
		}
	}

	// A baseline read back names objects, not places: every finding is
	// unchanged against the report of the same input.
	base := filepath.Join(t.TempDir(), "base.json")
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", "json", "-q")
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", "json", "-q", "--baseline", base)
	var cmp jsonReport
	if err := json.Unmarshal([]byte(out), &cmp); err != nil || cmp.Baseline == nil {
		t.Fatalf("baseline run: %v %s", err, errOut)
	}
	if cmp.Baseline.New != 0 || cmp.Baseline.Unchanged != len(cmp.Findings) {
		t.Errorf("against its own report: %d new, %d unchanged of %d", cmp.Baseline.New, cmp.Baseline.Unchanged, len(cmp.Findings))
	}

	// A live source (the demo) has no file to put on a reference.
	_, got, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	if strings.Contains(got, `"file"`) || strings.Contains(got, `"line"`) {
		t.Error("file or line on a demo report's objects")
	}
}

// checkDefinedAt reads o.File around o.Line and wants o's name there, in
// the object that starts at or after that line.
func checkDefinedAt(t *testing.T, o placedObject) {
	t.Helper()
	f, err := os.Open(o.File)
	if err != nil {
		t.Errorf("%s:%d: %v", o.File, o.Line, err)
		return
	}
	defer f.Close()
	name := regexp.MustCompile(`(^|[{\s])name:\s*"?` + regexp.QuoteMeta(o.Name) + `"?\s*([,}]|$)`)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if n < o.Line {
			continue
		}
		if n > o.Line && (strings.HasPrefix(sc.Text(), "---") || strings.HasPrefix(strings.TrimSpace(sc.Text()), "- apiVersion:")) {
			break
		}
		if name.MatchString(sc.Text()) {
			return
		}
	}
	t.Errorf("%s:%d does not define %s %s", o.File, o.Line, o.Kind, o.Name)
}

// TestHTMLReportShowsFindingIDs: each finding of -o html carries its ID,
// as text does, so an ID can be copied into a suppression from the page.
func TestHTMLReportShowsFindingIDs(t *testing.T) {
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	var r jsonReport
	if err := json.Unmarshal([]byte(out), &r); err != nil || len(r.Findings) == 0 {
		t.Fatalf("demo JSON: %v", err)
	}
	_, page, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "html")
	articles := strings.Split(page, "<article ")[1:]
	if len(articles) != len(r.Findings) {
		t.Fatalf("%d findings in HTML, %d in JSON", len(articles), len(r.Findings))
	}
	for i, f := range r.Findings {
		if !strings.Contains(articles[i], `<code class="fid"`) || !strings.Contains(articles[i], ">"+f.ID+"</code>") {
			t.Errorf("HTML finding %d lacks its ID %s", i+1, f.ID)
		}
	}
}

// linkSources are the inputs the link tests render: the demo (every
// founding gap), manifests (file:line, suppressions) and a preflight (the
// upgrade plan).
var linkSources = [][]string{
	{"--demo"},
	{"--from", "testdata/manifests"},
	{"--demo", "--target-version", "1.36"},
}

// TestRenderedLinksStayHome renders every -o format and fails on any URL
// whose host the repository does not control: links go to kubegap's own
// repository (the docs/cases pages) or to the sources the data cites,
// never to kubegap.dev unless configured.
func TestRenderedLinksStayHome(t *testing.T) {
	caseLink := regexp.MustCompile(regexp.QuoteMeta(report.RepositoryURL) + `/blob/main/docs/cases/([a-z0-9-]+)\.md`)
	for _, format := range outputNames() {
		cited := 0
		for _, src := range linkSources {
			args := append([]string{"audit", "-o", format, "-q", "--color", "never"}, src...)
			code, out, errOut := runWith(t, fixedApp(nil), args...)
			if code == ExitError {
				t.Fatalf("%v: %s", args, errOut)
			}
			if foreign := reporttest.ForeignLinks(out); len(foreign) > 0 {
				t.Errorf("%v links outside the repository and the cited sources: %v", args, foreign)
			}
			// Each case page linked is one the repository holds.
			for _, m := range caseLink.FindAllStringSubmatch(out, -1) {
				cited++
				if _, err := os.Stat(filepath.Join("..", "..", "docs", "cases", m[1]+".md")); err != nil {
					t.Errorf("-o %s links to %s: %v", format, m[0], err)
				}
			}
		}
		// Formats that link cases link them to the repository's pages.
		switch format {
		case "text", "markdown", "sarif", "junit":
			if cited == 0 {
				t.Errorf("-o %s links no case page", format)
			}
		}
	}
}

// TestCaseBaseURLSettings: --case-base-url, KUBEGAP_CASE_BASE_URL and the
// config's case-base-url point every case link at other pages, in that
// order of precedence; the report records which one; a value that is no
// http(s) URL is refused (exit 2, one line), the variable's value unsaid.
func TestCaseBaseURLSettings(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".kubegap.yaml"), []byte("case-base-url: https://config.example.com/kg/cases/\n"), 0o644)
	t.Chdir(dir)
	const flagBase, envBase, cfgBase = "https://flag.example.com/cases/", "https://env.example.com/c/{id}.html", "https://config.example.com/kg/cases/"
	for _, tc := range []struct {
		name      string
		env       map[string]string
		flags     []string
		base, url string // the case page of azure-cni-v2-glibc
		from      string
	}{
		{"flag over env and config", map[string]string{caseURLEnv: envBase}, []string{"--case-base-url", flagBase}, flagBase, flagBase + "azure-cni-v2-glibc", "--case-base-url"},
		{"env over config", map[string]string{caseURLEnv: envBase}, nil, envBase, "https://env.example.com/c/azure-cni-v2-glibc.html", caseURLEnv},
		{"config", nil, nil, cfgBase, cfgBase + "azure-cni-v2-glibc", "config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errOut := runWith(t, fixedApp(tc.env), append([]string{"audit", "--demo", "-o", "json"}, tc.flags...)...)
			var r struct {
				CaseBaseURL, CaseURL, CaseURLFrom string
				Source                            struct{ Config *struct{ Settings []string } }
			}
			if err := json.Unmarshal([]byte(out), &r); err != nil {
				t.Fatalf("%v: %s", err, errOut)
			}
			if r.CaseURL != tc.base || r.CaseURLFrom != tc.from {
				t.Errorf("caseURL %q from %q, want %q from %q", r.CaseURL, r.CaseURLFrom, tc.base, tc.from)
			}
			if want := strings.TrimSuffix(tc.base, "{id}.html"); strings.Contains(tc.base, "{id}") == (r.CaseBaseURL != "") || (r.CaseBaseURL != "" && r.CaseBaseURL != want) {
				t.Errorf("caseBaseURL %q for %q", r.CaseBaseURL, tc.base)
			}
			fromConfig := r.Source.Config != nil && slices.Contains(r.Source.Config.Settings, "case-base-url")
			if fromConfig != (tc.from == "config") {
				t.Errorf("source.config settings %+v (case URL from %s)", r.Source.Config, tc.from)
			}
			for _, format := range []string{"text", "markdown", "sarif", "junit"} {
				_, got, _ := runWith(t, fixedApp(merge(tc.env, map[string]string{"COLUMNS": "1000"})), append([]string{"audit", "--demo", "-o", format, "-q"}, tc.flags...)...)
				if !strings.Contains(got, tc.url) {
					t.Errorf("-o %s does not link %s", format, tc.url)
				}
				if strings.Contains(got, "/docs/cases/") {
					t.Errorf("-o %s still links the default pages", format)
				}
				if foreign := reporttest.ForeignLinks(got, tc.base); len(foreign) > 0 {
					t.Errorf("-o %s: %v", format, foreign)
				}
			}
		})
	}
	for _, tc := range []struct {
		env   map[string]string
		flags []string
		want  string
	}{
		{nil, []string{"--case-base-url", "kubegap.example.com/cases"}, `--case-base-url "kubegap.example.com/cases": want an http or https URL`},
		{map[string]string{caseURLEnv: "file:///secret-ish"}, nil, caseURLEnv + ": want an http or https URL"},
	} {
		code, out, errOut := runWith(t, fixedApp(tc.env), append([]string{"audit", "--demo"}, tc.flags...)...)
		if code != ExitError || out != "" || !strings.HasPrefix(errOut, "kubegap: "+tc.want) || strings.Count(errOut, "\n") != 1 || strings.Contains(errOut, "secret-ish") {
			t.Errorf("%v %v: exit %d, stdout %q, stderr %q", tc.env, tc.flags, code, out, errOut)
		}
	}
	os.WriteFile(filepath.Join(dir, ".kubegap.yaml"), []byte("case-base-url: /cases/\n"), 0o644)
	if code, _, errOut := runWith(t, fixedApp(nil), "audit", "--demo"); code != ExitError || !strings.Contains(errOut, `case-base-url "/cases/": want an http or https URL`) {
		t.Errorf("relative case-base-url in the config: exit %d, %q", code, errOut)
	}
}

func merge(a, b map[string]string) map[string]string {
	m := map[string]string{}
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// TestTextIndexGroupsBySubject: the text report opens with an index, one
// line per finding with its severity and ID, most severe first, whole in a
// pipe; findings about nodes of one pool are listed together under
// the pool (the demo's legacy1804 pool: its OS support, its OS image and
// its kubelet skew), and every finding appears in it once.
func TestTextIndexGroupsBySubject(t *testing.T) {
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--demo", "--color", "never")
	_, js, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	var r struct {
		Findings []struct {
			ID, Severity, Check string
			Objects             []struct{ Kind, Name string }
		}
	}
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "INDEX (") })
	if start < 0 || start > 6 {
		t.Fatalf("no index at the top:\n%s", out)
	}
	entry := regexp.MustCompile(`^( {2}| {4})(CRITICAL|HIGH|MEDIUM|LOW|INFO) +(kg-[0-9a-f]{16}) \S`)
	var ids, group []string
	inGroup := ""
	for _, l := range lines[start+1:] {
		if l == "" {
			break
		}
		// Not a terminal: titles are whole, wrapped within 80 columns (at
		// a terminal they are cut to its width).
		if strings.Contains(l, "…") || len([]rune(l)) > 80 {
			t.Errorf("index line cut or wider than 80 in a pipe: %q", l)
		}
		if m := entry.FindStringSubmatch(l); m != nil {
			ids = append(ids, m[3])
			if len(m[1]) == 4 && inGroup == "node pool legacy1804 (kubernetes.azure.com/agentpool)" {
				group = append(group, m[3])
			}
			continue
		}
		if strings.HasPrefix(l, "          ") { // a wrapped title's next line
			continue
		}
		if !strings.HasPrefix(l, "  ") || strings.HasPrefix(l, "   ") {
			t.Errorf("index line %q is neither an entry nor a subject", l)
		}
		inGroup, _, _ = strings.Cut(strings.TrimSpace(l), ": ")
	}
	if len(ids) != len(r.Findings) {
		t.Fatalf("%d index entries for %d findings:\n%s", len(ids), len(r.Findings), strings.Join(lines[start:start+len(r.Findings)+5], "\n"))
	}
	var legacy []string
	for _, f := range r.Findings {
		if !slices.Contains(ids, f.ID) {
			t.Errorf("finding %s not in the index", f.ID)
		}
		if len(f.Objects) > 0 && f.Objects[0].Kind == "Node" && strings.HasPrefix(f.Objects[0].Name, "aks-legacy1804-") && len(f.Objects) == 1 {
			legacy = append(legacy, f.ID)
		}
	}
	slices.Sort(group)
	slices.Sort(legacy)
	if len(legacy) < 3 || !slices.Equal(group, legacy) {
		t.Errorf("legacy1804 pool group %v, want its findings %v", group, legacy)
	}
	// The demo's most severe findings are high: the index opens with one.
	if len(ids) > 0 && !strings.Contains(lines[start+1], "HIGH") && !strings.Contains(lines[start+1], "CRITICAL") {
		t.Errorf("index does not start with the most severe: %q", lines[start+1])
	}
}
