package web

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kubegap/kubegap/internal/library"
	librarydata "github.com/kubegap/kubegap/library"
)

// libraryOf loads the embedded library grown to n cases by copying real
// cases under new IDs, so benchmarks measure the size the library is
// heading for, not the size it has today.
func libraryOf(b *testing.B, n int) *library.Library {
	b.Helper()
	m := fstest.MapFS{}
	tax, err := fs.ReadFile(librarydata.FS, "taxonomy.yaml")
	if err != nil {
		b.Fatal(err)
	}
	m["taxonomy.yaml"] = &fstest.MapFile{Data: tax}
	entries, err := fs.ReadDir(librarydata.FS, "cases")
	if err != nil {
		b.Fatal(err)
	}
	var files [][]byte
	var names []string
	for _, e := range entries {
		data, err := fs.ReadFile(librarydata.FS, "cases/"+e.Name())
		if err != nil {
			b.Fatal(err)
		}
		files, names = append(files, data), append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	for i := 0; i < n; i++ {
		name := names[i%len(names)]
		if i >= len(names) {
			name = fmt.Sprintf("%s-copy-%d", name, i/len(names))
		}
		m["cases/"+name+".yaml"] = &fstest.MapFile{Data: files[i%len(files)]}
	}
	lib, err := library.Load(m)
	if err != nil {
		b.Fatal(err)
	}
	if len(lib.Cases()) != n {
		b.Fatalf("synthetic library has %d cases, want %d", len(lib.Cases()), n)
	}
	return lib
}

func benchServer(b *testing.B, cases int) *Server {
	o := testOptions(b)
	o.Library = libraryOf(b, cases)
	s, err := NewServer(o)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkCasesPage renders /cases server-side over 100 cases and over
// 250 (issue 26's size: ≤ 50 ms): the whole request, query parsing to the
// last byte of HTML.
func BenchmarkCasesPage(b *testing.B) {
	for _, n := range []int{100, 250} {
		s := benchServer(b, n)
		for _, path := range []string{"/cases", "/cases?component=cni-plugin&component=kubelet&q=node&sort=oldest"} {
			b.Run(fmt.Sprintf("%d%s", n, strings.ReplaceAll(path, "/", "_")), func(b *testing.B) {
				c0 := processCPU(b)
				for b.Loop() {
					code, body := get(b, s, path)
					if code != 200 || len(body) == 0 {
						b.Fatalf("status %d", code)
					}
				}
				// CPU time as well as wall time: on the shared machine
				// the wall time mostly measures the other processes.
				b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is the user and system CPU time the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSite writes the whole static site for 100 cases.
func BenchmarkSite(b *testing.B) {
	o := testOptions(b)
	o.Library = libraryOf(b, 100)
	dir := b.TempDir()
	for b.Loop() {
		if err := WriteSite(dir, o); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTMLReportOpen opens the single-file HTML report in headless
// Chromium and waits until the page has loaded and its script has run.
// KUBEGAP_BENCH_REPORT names a JSON report (the 100k-pod benchmark
// cluster's: see docs/web.md); without it the demo report is used.
func BenchmarkHTMLReportOpen(b *testing.B) {
	chromiumPath(b)
	o := testOptions(b)
	rep := o.Report
	if p := os.Getenv("KUBEGAP_BENCH_REPORT"); p != "" {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		rep, err = ReadReport(f)
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
	}
	var page bytes.Buffer
	if err := WriteReportHTML(&page, rep, o.Library); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer ts.Close()
	br := newBrowser(b, ts.URL)
	defer br.done()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		br.do(chromedp.Navigate(fmt.Sprintf("%s/report.html?n=%d", ts.URL, i)))
		// Navigate returns on the load event; the filter script runs
		// before it and marks the body when done. Two animation frames
		// later the first screen has been laid out and painted.
		got, err := chromedp.Run(br.ctx, chromedp.Evaluate[string](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() =>
			r(document.body.hasAttribute('data-ready') ? document.getElementById('finding-count').textContent : ''))))`, chromedp.EvalAwaitPromise))
		if err != nil || !strings.HasSuffix(got, "findings") {
			b.Fatalf("report not rendered: %q %v", got, err)
		}
	}
	b.ReportMetric(float64(page.Len())/1e6, "MB")
	b.ReportMetric(float64(len(rep.Findings)), "findings")
}
