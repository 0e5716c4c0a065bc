package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
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
