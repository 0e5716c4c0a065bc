package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
)

// chromiumPath finds headless Chromium. hack/test.sh installs Debian's
// chromium; under it (KUBEGAP_TEST_RUN set) a missing browser fails the
// test rather than skipping it.
func chromiumPath(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("KUBEGAP_TEST_RUN") != "" {
		t.Fatal("chromium is not installed; hack/test.sh installs it")
	}
	t.Skip("chromium is not installed (apt-get install chromium); browser tests skipped")
	return ""
}

// browser is one headless Chromium tab that records console errors and
// every request to a host other than the page's own.
type browser struct {
	t    testing.TB
	ctx  context.Context
	host string

	mu      sync.Mutex
	errors  []string
	foreign []string
}

func newBrowser(t testing.TB, origin string) *browser {
	t.Helper()
	u, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // tests may run as root in a container
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	b := &browser{t: t, ctx: ctx, host: u.Host}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if err := chromedp.Listen(ctx, b.event); err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) event(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			b.errors = append(b.errors, fmt.Sprintf("console.error: %v", e.Args))
		}
	case *runtime.EventExceptionThrown:
		b.errors = append(b.errors, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception))
	case *log.EventEntryAdded:
		// CSP violations and failed loads land here.
		if e.Entry.Level == log.EntryLevelError {
			b.errors = append(b.errors, "log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		u, err := url.Parse(e.Request.URL)
		if err != nil || (u.Scheme != "data" && u.Scheme != "about" && u.Scheme != "file" && u.Host != b.host) {
			b.foreign = append(b.foreign, e.Request.URL)
		}
	}
}

// done fails the test on any console error or foreign request seen.
func (b *browser) done() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("browser console: %s", e)
	}
	for _, u := range b.foreign {
		b.t.Errorf("request to another host: %s", u)
	}
}

func (b *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.t.Fatal(err)
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func (b *browser) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", js, err)
	}
	return s
}

// waitFor polls a JavaScript condition: server pages navigate, static
// pages re-render in place, and both end when the condition holds.
func (b *browser) waitFor(cond string) {
	b.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`(function(){try{return document.readyState==='complete' && !!(`+cond+`)}catch(e){return false}})()`))
		if err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.t.Fatalf("timed out waiting for %s (at %s)", cond, b.eval("location.href"))
}

// shoot saves a screenshot at width w when KUBEGAP_SCREENSHOTS names a
// directory (docs/web.md shows them); tests write nothing otherwise.
func (b *browser) shoot(name string, w int64) {
	dir := os.Getenv("KUBEGAP_SCREENSHOTS")
	if dir == "" {
		return
	}
	b.t.Helper()
	b.do(chromedp.EmulateViewport(w, 900))
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.do(chromedp.EmulateViewport(1280, 900))
}

// shootDark saves a desktop screenshot in the dark theme.
func (b *browser) shootDark(name string) {
	if os.Getenv("KUBEGAP_SCREENSHOTS") == "" {
		return
	}
	b.t.Helper()
	media := func(scheme string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		})
	}
	b.do(media("dark"))
	b.shoot(name, 1280)
	b.do(media("light"))
}

// paths are where the pages are in each mode.
type paths struct {
	cases  string
	report string
}

func TestBrowserServer(t *testing.T) {
	chromiumPath(t)
	ts := httptest.NewServer(testServer(t))
	defer ts.Close()
	runBrowserFlow(t, ts.URL, paths{cases: "/cases", report: "/report"}, "server")
}

func TestBrowserStaticSite(t *testing.T) {
	chromiumPath(t)
	dir := t.TempDir()
	if err := WriteSite(dir, testOptions(t)); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer ts.Close()
	runBrowserFlow(t, ts.URL, paths{cases: "/cases/index.html", report: "/report/index.html"}, "static")
}

func runBrowserFlow(t *testing.T, origin string, p paths, label string) {
	o := testOptions(t)
	lib := o.Library
	all := lib.Cases()
	b := newBrowser(t, origin)
	defer b.done()

	b.do(chromedp.Navigate(origin + p.cases))
	b.waitFor(`document.getElementById('case-count')`)
	total := len(all)
	if got, want := b.text("#case-count"), fmt.Sprintf("1 to %d of %d cases", min(total, defaultPerPage), total); got != want {
		t.Fatalf("case count %q, want %q", got, want)
	}
	if b.eval(`document.documentElement.className`) != "js" {
		t.Errorf("the page's script did not run")
	}
	countsBefore := b.eval(`Array.from(document.querySelectorAll('aside.facets li:not([hidden]) a')).map(a=>a.dataset.value+'='+a.querySelector('.count').textContent).join(',')`)
	b.shoot(label+"-cases-desktop", 1280)
	b.shoot(label+"-cases-360", 360)

	// Keyboard: the first Tab reaches the skip link, Enter moves to main,
	// and Tab from there walks the facet links.
	b.do(chromedp.KeyEvent("\t"))
	if got := b.eval(`document.activeElement.className`); got != "skip" {
		t.Errorf("first Tab focuses %q, want the skip link", got)
	}
	b.do(chromedp.KeyEvent("\r"))
	b.waitFor(`location.hash === '#main'`)
	var walked []string
	for i := 0; i < 3; i++ {
		b.do(chromedp.KeyEvent("\t"))
		walked = append(walked, b.eval(`document.activeElement.tagName + ' ' + (document.activeElement.getAttribute('data-facet') || '')`))
		if walked[i] == "A rootCause" {
			break
		}
	}
	if walked[len(walked)-1] != "A rootCause" {
		t.Errorf("Tab after the skip link walks %v, never reaching the first facet link", walked)
	}

	// Select a facet value: the list and the counts change.
	one := countMatching(lib, library.FacetComponent, "cni-plugin")
	b.do(chromedp.Click(chromedp.CSS(`a[data-facet="component"][data-value="cni-plugin"]`)))
	b.waitFor(`document.querySelector('a.on[data-value="cni-plugin"]')`)
	if got, want := b.text("#case-count"), fmt.Sprintf("1 to %d of %d cases", min(one, defaultPerPage), one); got != want {
		t.Errorf("after selecting cni-plugin: %q, want %q", got, want)
	}
	if n := b.eval(`String(document.querySelectorAll('#case-list [data-case]:not([hidden])').length)`); n != fmt.Sprint(min(one, defaultPerPage)) {
		t.Errorf("after selecting cni-plugin: %s cards shown, want %d", n, one)
	}
	if after := b.eval(`Array.from(document.querySelectorAll('aside.facets li:not([hidden]) a')).map(a=>a.dataset.value+'='+a.querySelector('.count').textContent).join(',')`); after == countsBefore {
		t.Errorf("facet counts did not change with the selection")
	}
	if !strings.Contains(b.eval("location.search"), "component=cni-plugin") {
		t.Errorf("selection not in the URL")
	}
	b.shoot(label+"-cases-filtered-desktop", 1280)
	b.shootDark(label + "-cases-filtered-dark")
	// A second value of the same facet widens the list (OR).
	two := countMatching(lib, library.FacetComponent, "cni-plugin", "kubelet")
	b.do(chromedp.Click(chromedp.CSS(`a[data-facet="component"][data-value="kubelet"]`)))
	b.waitFor(`document.querySelector('a.on[data-value="kubelet"]')`)
	if got := b.text("#case-count"); !strings.HasSuffix(got, fmt.Sprintf("of %d cases", two)) {
		t.Errorf("two components: %q, want %d cases", got, two)
	}

	// Search, from the whole library.
	b.do(chromedp.Navigate(origin + p.cases))
	b.waitFor(`document.getElementById('q')`)
	res, _ := lib.Query(library.Query{Search: "glibc"})
	b.do(chromedp.SendKeys(chromedp.CSS("#q"), "glibc"), chromedp.Submit(chromedp.CSS("#q")))
	b.waitFor(`location.search.indexOf('q=glibc') >= 0 && document.getElementById('case-count').textContent.indexOf('of ` + fmt.Sprint(res.Total) + ` cases') >= 0`)

	// Page 2 starts with the 21st newest case.
	if total > defaultPerPage {
		b.do(chromedp.Navigate(origin + p.cases))
		b.waitFor(`document.querySelector('#pager a[rel=next]')`)
		b.do(chromedp.Click(chromedp.CSS(`#pager a[rel=next]`)))
		b.waitFor(`location.search.indexOf('page=2') >= 0`)
		first := b.eval(`document.querySelector('#case-list [data-case]:not([hidden])').dataset.case`)
		if first != all[defaultPerPage].ID {
			t.Errorf("page 2 starts with %s, want %s", first, all[defaultPerPage].ID)
		}
	}

	// Open a case and follow a source link's href.
	c := all[0]
	b.do(chromedp.Navigate(origin + p.cases))
	b.waitFor(`document.querySelector('#case-list a')`)
	b.do(chromedp.Click(chromedp.CSS(`[data-case="` + c.ID + `"] h3 a`)))
	b.waitFor(`document.getElementById('sources')`)
	if h := b.text("h1"); h != c.Title {
		t.Errorf("case page heading %q, want %q", h, c.Title)
	}
	if href := b.eval(`document.querySelector('#sources a').href`); href != c.Sources[0].URL {
		t.Errorf("first source links to %q, want %q", href, c.Sources[0].URL)
	}
	b.shoot(label+"-case-desktop", 1280)
	b.shoot(label+"-case-360", 360)

	// The report, filtered by severity.
	rep := o.Report
	high := rep.Summary.Count(finding.High)
	b.do(chromedp.Navigate(origin + p.report))
	b.waitFor(`document.getElementById('f-severity')`)
	b.shoot(label+"-report-desktop", 1280)
	b.shoot(label+"-report-360", 360)
	b.shootDark(label + "-report-dark")
	b.eval(`(function(){var s=document.getElementById('f-severity'); s.value='high'; s.dispatchEvent(new Event('change')); return ''})()`)
	b.waitFor(`document.getElementById('finding-count').textContent === '` + fmt.Sprintf("%d of %d findings", high, len(rep.Findings)) + `'`)
	if n := b.eval(`String(document.querySelectorAll('[data-finding]:not([hidden])').length)`); n != fmt.Sprint(high) {
		t.Errorf("severity high: %s findings shown, want %d", n, high)
	}
	if bad := b.eval(`Array.from(document.querySelectorAll('[data-finding]:not([hidden])')).filter(e=>e.dataset.severity!=='high').length+''`); bad != "0" {
		t.Errorf("severity high shows %s findings of another severity", bad)
	}
}

func TestBrowserHTMLReport(t *testing.T) {
	chromiumPath(t)
	o := testOptions(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReportHTML(f, o.Report, o.Library); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ts := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer ts.Close()
	b := newBrowser(t, ts.URL)
	defer b.done()
	b.do(chromedp.Navigate(ts.URL + "/report.html"))
	b.waitFor(`document.getElementById('f-severity')`)
	medium := o.Report.Summary.Count(finding.Medium)
	b.eval(`(function(){var s=document.getElementById('f-severity'); s.value='medium'; s.dispatchEvent(new Event('change')); return ''})()`)
	b.waitFor(`document.querySelectorAll('[data-finding]:not([hidden])').length === ` + fmt.Sprint(medium))
	// A case link jumps to the case inside the page.
	id := o.Report.Findings[0].Cases[0]
	if b.eval(`document.querySelector('a[href="#case-`+id+`"]') && document.getElementById('case-`+id+`') ? 'ok' : 'missing'`) != "ok" {
		t.Errorf("case %s is not an anchor in the page", id)
	}
}

// TestBrowserServerWithoutJavaScript runs the server's pages with script
// execution off: facets, paging and the report filter are links and GET
// forms, so they work the same.
func TestBrowserServerWithoutJavaScript(t *testing.T) {
	chromiumPath(t)
	o := testOptions(t)
	ts := httptest.NewServer(testServer(t))
	defer ts.Close()
	b := newBrowser(t, ts.URL)
	defer b.done()
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.do(chromedp.Navigate(ts.URL + "/cases"))
	b.waitFor(`document.body.dataset.mode === 'server'`)
	if b.eval(`document.documentElement.className`) == "js" {
		t.Fatal("the page's script ran: script execution is not off")
	}
	one := countMatching(o.Library, library.FacetComponent, "cni-plugin")
	b.do(chromedp.Click(chromedp.CSS(`a[data-facet="component"][data-value="cni-plugin"]`)))
	b.waitFor(`document.querySelector('a.on[data-value="cni-plugin"]')`)
	if got := b.text("#case-count"); got != fmt.Sprintf("1 to %d of %d cases", min(one, defaultPerPage), one) {
		t.Errorf("without JavaScript, selecting cni-plugin shows %q", got)
	}
	b.do(chromedp.Navigate(ts.URL + "/report"))
	b.do(chromedp.SetValue(chromedp.CSS("#f-severity"), "high"), chromedp.Click(chromedp.CSS(`#report-filters button`)))
	b.waitFor(`location.search.indexOf('severity=high') >= 0`)
	high := o.Report.Summary.Count(finding.High)
	if n := b.eval(`String(document.querySelectorAll('[data-finding]').length)`); n != fmt.Sprint(high) {
		t.Errorf("without JavaScript, severity=high shows %s findings, want %d", n, high)
	}
}

// TestBrowserUpload uploads a JSON report through the form and sees it,
// escaped, on the page it leads to.
func TestBrowserUpload(t *testing.T) {
	chromiumPath(t)
	ts := httptest.NewServer(testServer(t))
	defer ts.Close()
	data, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, ts.URL)
	defer b.done()
	b.do(chromedp.Navigate(ts.URL+"/report"),
		chromedp.SetUploadFiles(chromedp.CSS("#report-file"), []string{file}),
		chromedp.Click(chromedp.CSS(`form.upload button`)))
	b.waitFor(`location.search.indexOf('r=') >= 0`)
	if got := b.text("#report-name"); got != "hostile.json" {
		t.Errorf("uploaded report named %q", got)
	}
	if got := b.text("article.finding h4"); got != "<script>alert(1)</script>" {
		t.Errorf("finding title %q, want the markup shown as text", got)
	}
	// The filter keeps the uploaded report.
	b.eval(`(function(){var s=document.getElementById('f-severity'); s.value='high'; s.dispatchEvent(new Event('change')); return ''})()`)
	b.waitFor(`location.search.indexOf('severity=high') >= 0 && location.search.indexOf('r=') >= 0`)
	if got := b.text("#report-name"); got != "hostile.json" {
		t.Errorf("after filtering, the page shows %q", got)
	}
}
