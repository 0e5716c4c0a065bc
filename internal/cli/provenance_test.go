package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestIDSuppressionAndConfigProvenance: an id: entry alone, as copied from
// a report, suppresses that finding; every format names the config file
// and what it changed.
func TestIDSuppressionAndConfigProvenance(t *testing.T) {
	manifests, _ := filepath.Abs("testdata/manifests")
	_, out, errOut := runWith(t, fixedApp(nil), "audit", "--from", manifests, "-o", "json", "-q")
	var before struct {
		Findings []struct{ ID, Check string }
	}
	if err := json.Unmarshal([]byte(out), &before); err != nil || len(before.Findings) < 2 {
		t.Fatalf("no findings to suppress (%v): %s", err, errOut)
	}
	target := before.Findings[0]

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".kubegap.yaml"), []byte("skip-checks: [webhook-blast-radius]\nsuppressions:\n- id: "+target.ID+"\n  reason: accepted until the pool is gone\n"), 0o644)
	t.Chdir(dir)
	code, out, errOut := runWith(t, fixedApp(nil), "audit", "--from", manifests, "-o", "json", "-q")
	if code == ExitError {
		t.Fatalf("id-only suppression refused: %s", errOut)
	}
	var r struct {
		Findings   []struct{ ID, Check string }
		Suppressed []struct {
			By      string
			Finding struct{ ID string }
		}
		Source struct {
			Config *struct {
				Path          string
				Settings      []string
				SkippedChecks []string
				Suppressions  int
				Suppressed    int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Findings {
		if f.ID == target.ID || f.Check == "webhook-blast-radius" {
			t.Errorf("finding %s (%s) still reported", f.ID, f.Check)
		}
	}
	found := false
	for _, s := range r.Suppressed {
		found = found || (s.By == "config" && s.Finding.ID == target.ID)
	}
	if !found {
		t.Errorf("%s not among the suppressed: %+v", target.ID, r.Suppressed)
	}
	c := r.Source.Config
	if c == nil || c.Path != ".kubegap.yaml" && !strings.HasSuffix(c.Path, "/.kubegap.yaml") {
		t.Fatalf("source.config = %+v", c)
	}
	if strings.Join(c.Settings, ",") != "skip-checks" || strings.Join(c.SkippedChecks, ",") != "webhook-blast-radius" || c.Suppressions != 1 || c.Suppressed != 1 {
		t.Errorf("source.config = %+v", *c)
	}
	want := "config " + c.Path + ": set skip-checks; skipped 1 check (webhook-blast-radius); suppressed 1 finding by 1 entry"
	for _, format := range []string{"text", "summary", "markdown", "sarif", "html"} {
		_, got, _ := runWith(t, fixedApp(map[string]string{"COLUMNS": "1000"}), "audit", "--from", manifests, "-o", format, "-q", "--color", "never")
		flat := strings.Join(strings.Fields(strings.ReplaceAll(got, "\\", "")), " ")
		if !strings.Contains(flat, want) {
			t.Errorf("-o %s does not name the config and its effects (%q)", format, want)
		}
	}
	// Without a config file, nothing claims one.
	os.Remove(filepath.Join(dir, ".kubegap.yaml"))
	_, out, _ = runWith(t, fixedApp(map[string]string{"HOME": dir}), "audit", "--from", manifests, "-o", "json", "-q")
	if strings.Contains(out, `"config"`) {
		t.Error("source.config without a config file")
	}
}

// TestFileLineInEveryFormat: an object read from a file is named with its
// file:line in text, Markdown, JUnit and JSON, as SARIF locates it.
func TestFileLineInEveryFormat(t *testing.T) {
	_, out, _ := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", "json", "-q")
	var r struct {
		Findings []struct {
			Objects   []struct{ Kind, Namespace, Name string }
			Locations []struct {
				Object struct{ Kind, Namespace, Name string }
				File   string
				Line   int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	var at string
	for _, f := range r.Findings {
		for _, l := range f.Locations {
			if l.Line > 0 && at == "" {
				at = l.File + ":" + itoa(l.Line)
			}
		}
	}
	if at == "" {
		t.Fatalf("JSON carries no locations:\n%s", out)
	}
	// The line is the object's: the file at that line starts its kind.
	if !regexp.MustCompile(`^testdata/manifests/\S+:\d+$`).MatchString(at) {
		t.Errorf("location %q is not relative to the working directory", at)
	}
	for _, format := range []string{"text", "markdown", "junit"} {
		_, got, _ := runWith(t, fixedApp(nil), "audit", "--from", "testdata/manifests", "-o", format, "-q", "--color", "never")
		if !strings.Contains(got, at) {
			t.Errorf("-o %s does not name %s", format, at)
		}
	}
	// A live source (the demo) has no file to name.
	_, got, _ := runWith(t, fixedApp(nil), "audit", "--demo", "-o", "json")
	if strings.Contains(got, `"locations"`) {
		t.Error("locations on a demo report")
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
