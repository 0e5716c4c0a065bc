package web

import (
	"bytes"
	"encoding/json"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var attrURL = regexp.MustCompile(`(?:href|src|action)="([^"]*)"`)

func TestSiteLinksResolve(t *testing.T) {
	o := testOptions(t)
	dir := t.TempDir()
	if err := WriteSite(dir, o); err != nil {
		t.Fatal(err)
	}
	pages := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		pages++
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range attrURL.FindAllStringSubmatch(string(data), -1) {
			u := html.UnescapeString(m[1])
			if strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "#") || strings.HasPrefix(u, "data:") {
				continue
			}
			if strings.HasPrefix(u, "/") {
				t.Errorf("%s: absolute link %q breaks on a static host under a path", p, u)
				continue
			}
			u, _, _ = strings.Cut(u, "?")
			target := filepath.Join(filepath.Dir(p), filepath.FromSlash(u))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q does not resolve: %v", p, m[1], err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// index.html, the case list, each case, the check list, each check, the report.
	if want := 4 + len(o.Library.Cases()) + len(o.Checks); pages != want {
		t.Errorf("wrote %d HTML pages, want %d", pages, want)
	}
	var idx caseIndex
	raw, err := os.ReadFile(filepath.Join(dir, "cases", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &idx); err != nil || len(idx.Cases) != len(o.Library.Cases()) {
		t.Fatalf("index.json: %v, %d cases", err, len(idx.Cases))
	}
}

func TestHTMLReportIsSelfContained(t *testing.T) {
	o := testOptions(t)
	var buf bytes.Buffer
	if err := WriteReportHTML(&buf, o.Report, o.Library); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{`<link rel="stylesheet"`, `<script src`, `<img`, `@import`, `url(`} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML report contains %q, which would load from elsewhere", bad)
		}
	}
	if !strings.Contains(page, "<style>") || !strings.Contains(page, "<script>") {
		t.Errorf("styles and script should be inline")
	}
	// Case links are anchors to cases written into the page.
	for _, f := range o.Report.Findings {
		for _, id := range f.Cases {
			if !strings.Contains(page, `href="#case-`+id+`"`) || !strings.Contains(page, `id="case-`+id+`"`) {
				t.Errorf("case %s not linked to an anchor in the page", id)
			}
		}
	}
}
