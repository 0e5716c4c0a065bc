package web

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/report/reporttest"
)

// elsewhere is a case base a report was written with: serve and site link
// its cases to their own pages instead.
const elsewhere = "https://elsewhere.example.com/cases/"

func linkOptions(t *testing.T) Options {
	o := testOptions(t)
	rep := *o.Report
	rep.SetCaseURL(elsewhere, "--case-base-url")
	o.Report = &rep
	return o
}

// TestServedPagesLinkHome: every page 'kubegap serve' shows links only to
// itself, kubegap's repository and the sources the data cites; a report's
// cases go to the server's own case pages whatever base it was written
// with.
func TestServedPagesLinkHome(t *testing.T) {
	o := linkOptions(t)
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"/cases", "/checks", "/report"}
	for _, c := range o.Library.Cases() {
		paths = append(paths, "/cases/"+c.ID)
	}
	for _, c := range o.Checks {
		paths = append(paths, "/checks/"+c.ID)
	}
	for _, p := range paths {
		code, body := get(t, s, p)
		if code != 200 {
			t.Fatalf("GET %s: %d", p, code)
		}
		if foreign := reporttest.ForeignLinks(body, "http://localhost:8080/"); len(foreign) > 0 {
			t.Errorf("GET %s links to %v", p, foreign)
		}
	}
	_, body := get(t, s, "/report")
	if strings.Contains(body, elsewhere) || !strings.Contains(body, `href="/cases/`) {
		t.Errorf("the served report does not link its cases to the server's pages")
	}
}

// TestSiteAndHTMLReportLinkHome: the same for every file of 'kubegap
// site' (whose own links are relative) and for -o html.
func TestSiteAndHTMLReportLinkHome(t *testing.T) {
	o := linkOptions(t)
	dir := t.TempDir()
	if err := WriteSite(dir, o); err != nil {
		t.Fatal(err)
	}
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if foreign := reporttest.ForeignLinks(string(b)); len(foreign) > 0 {
			t.Errorf("%s links to %v", p, foreign)
		}
		return nil
	})
	if err != nil || files == 0 {
		t.Fatalf("walking the site: %v, %d files", err, files)
	}
	rp, err := os.ReadFile(filepath.Join(dir, "report", "index.html"))
	if err != nil || bytes.Contains(rp, []byte(elsewhere)) || !bytes.Contains(rp, []byte(`href="../cases/`)) {
		t.Errorf("the site's report does not link its cases to the site's pages (%v)", err)
	}
	var page bytes.Buffer
	if err := WriteReportHTML(&page, o.Report, o.Library); err != nil {
		t.Fatal(err)
	}
	if foreign := reporttest.ForeignLinks(page.String()); len(foreign) > 0 {
		t.Errorf("-o html links to %v", foreign)
	}
}
