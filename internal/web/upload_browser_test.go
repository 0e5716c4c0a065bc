package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// uploadLog wraps the server: it records each upload's status and the
// headers the browser sent, and lists watchDir at every read of an
// upload's body, so a file spooled there during the upload is seen.
type uploadLog struct {
	h        http.Handler
	watchDir string

	mu      sync.Mutex
	posts   []postSeen
	spooled map[string]bool
}

type postSeen struct {
	status               int
	origin, secFetchSite string
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (u *uploadLog) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		u.h.ServeHTTP(w, req)
		return
	}
	seen := map[string]bool{}
	if u.watchDir != "" {
		req.Body = &tmpWatch{ReadCloser: req.Body, dir: u.watchDir, seen: seen}
	}
	sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	u.h.ServeHTTP(sw, req)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.posts = append(u.posts, postSeen{sw.status, req.Header.Get("Origin"), req.Header.Get("Sec-Fetch-Site")})
	for name := range seen {
		u.spooled[name] = true
	}
}

func (u *uploadLog) waitPosts(t *testing.T, n int) []postSeen {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		u.mu.Lock()
		got := append([]postSeen(nil), u.posts...)
		u.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the server saw %d uploads, want %d", len(u.posts), n)
	return nil
}

// attackerFrame is a page of another site: a sandboxed iframe that posts
// a report to target twice, with fetch and with a form whose file input
// the script fills. The frame's origin is opaque: Chromium sends
// "Origin: null" and "Sec-Fetch-Site: cross-site".
const attackerFrame = `<!doctype html><html><body><script>
var report = %s, target = %q;
function file(name) { return new File([report], name, {type: 'application/json'}); }
var fd = new FormData();
fd.append('report', file('fetched.json'));
fetch(target, {method: 'POST', body: fd, mode: 'no-cors'}).catch(function(){}).then(function() {
  var f = document.createElement('form');
  f.method = 'POST'; f.enctype = 'multipart/form-data'; f.action = target;
  var i = document.createElement('input');
  i.type = 'file'; i.name = 'report';
  var dt = new DataTransfer(); dt.items.add(file('form.json')); i.files = dt.files;
  f.appendChild(i); document.body.appendChild(f); f.submit();
});
</script></body></html>`

// TestBrowserCrossOriginUploadRefused: in headless Chromium, a page on
// another origin (a second server, reached as localhost while kubegap is
// 127.0.0.1) whose sandboxed iframe posts a report to kubegap serve gets
// 403 for both a fetch and a form post, and no report is kept (before,
// both got 303 and replaced the user's uploads).
func TestBrowserCrossOriginUploadRefused(t *testing.T) {
	chromiumPath(t)
	s := testServer(t)
	log := &uploadLog{h: s, spooled: map[string]bool{}}
	ts := httptest.NewServer(log)
	defer ts.Close()
	report, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(string(report))
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch req.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><html><body><iframe sandbox="allow-scripts allow-forms" src="/frame"></iframe></body></html>`)
		case "/frame":
			fmt.Fprintf(w, attackerFrame, quoted, ts.URL+"/report")
		default:
			http.NotFound(w, req)
		}
	}))
	defer attacker.Close()
	page := strings.Replace(attacker.URL, "127.0.0.1", "localhost", 1)
	if !strings.HasPrefix(ts.URL, "http://127.0.0.1:") || page == attacker.URL {
		t.Fatalf("want kubegap on 127.0.0.1 and the attacker on localhost: %s, %s", ts.URL, page)
	}
	b := newBrowser(t, page) // requests to kubegap are the point: no b.done()
	b.do(chromedp.Navigate(page + "/"))
	for i, p := range log.waitPosts(t, 2) {
		if p.status != http.StatusForbidden {
			t.Errorf("upload %d from the sandboxed frame: status %d, want 403", i+1, p.status)
		}
		if p.origin != "null" || p.secFetchSite != "cross-site" {
			t.Errorf("upload %d sent Origin %q, Sec-Fetch-Site %q; the test means null, cross-site", i+1, p.origin, p.secFetchSite)
		}
	}
	s.mu.Lock()
	kept := len(s.uploads)
	s.mu.Unlock()
	if kept != 0 {
		t.Errorf("%d uploads kept from another origin", kept)
	}
}

// TestBrowserUploadWritesNoTempFile: uploads through the form of the
// server's own page, one just over the 32 MB limit (refused, 413) and one
// inside it (shown), create no file under $TMPDIR while the server reads
// them or after. (Chromium starts first, with the test's TMPDIR; the
// server's, this process's, is then a fresh directory.)
func TestBrowserUploadWritesNoTempFile(t *testing.T) {
	chromiumPath(t)
	good, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	over := filepath.Join(dir, "over.json")
	inside := filepath.Join(dir, "inside.json")
	if err := os.WriteFile(over, append(append([]byte{}, good...), bytes.Repeat([]byte(" "), MaxUploadBytes+512<<10-len(good))...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inside, append(append([]byte{}, good...), bytes.Repeat([]byte(" "), 8<<20)...), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := t.TempDir()
	log := &uploadLog{h: testServer(t), watchDir: fresh, spooled: map[string]bool{}}
	ts := httptest.NewServer(log)
	defer ts.Close()
	b := newBrowser(t, ts.URL)
	defer b.done()
	t.Setenv("TMPDIR", fresh)

	b.do(chromedp.Navigate(ts.URL+"/report"),
		chromedp.SetUploadFiles(chromedp.CSS("#report-file"), []string{over}),
		chromedp.Click(chromedp.CSS(`form.upload button`)))
	b.waitFor(`/Report too large|Bad request/.test(document.querySelector('h1').textContent)`)
	b.do(chromedp.Navigate(ts.URL+"/report"),
		chromedp.SetUploadFiles(chromedp.CSS("#report-file"), []string{inside}),
		chromedp.Click(chromedp.CSS(`form.upload button`)))
	b.waitFor(`location.search.indexOf('r=') >= 0`)
	if got := b.text("#report-name"); got != "inside.json" {
		t.Errorf("uploaded report named %q", got)
	}
	posts := log.waitPosts(t, 2)
	if posts[0].status != http.StatusRequestEntityTooLarge || posts[1].status != http.StatusSeeOther {
		t.Errorf("statuses %d, %d; want 413, 303", posts[0].status, posts[1].status)
	}
	// The refused upload's 413 is logged as a failed load: expected.
	b.mu.Lock()
	kept := b.errors[:0]
	for _, e := range b.errors {
		if !strings.Contains(e, "status of 413") {
			kept = append(kept, e)
		}
	}
	b.errors = kept
	b.mu.Unlock()
	es, _ := os.ReadDir(fresh)
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(es) > 0 || len(log.spooled) > 0 {
		t.Errorf("files under $TMPDIR during the uploads: %v; after: %d", log.spooled, len(es))
	}
}
