package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/present"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

var demoReportOnce = sync.OnceValues(func() (*report.Report, error) {
	snap, err := demo.Snapshot()
	if err != nil {
		return nil, err
	}
	return audit.Run(snap, checks.All(), audit.Options{}), nil
})

func testOptions(t testing.TB) Options {
	t.Helper()
	lib, err := library.Default()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := demoReportOnce()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Library: lib, Checks: checks.All(), Report: rep, ReportName: "demo cluster"}
}

func testServer(t testing.TB) *Server {
	t.Helper()
	s, err := NewServer(testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// get requests path from h as a browser on localhost would.
func get(t testing.TB, h http.Handler, path string) (int, string) {
	t.Helper()
	req := httptest.NewRequest("GET", "http://localhost:8080"+path, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// countMatching counts library cases carrying any of ids for facet.
func countMatching(lib *library.Library, facet string, ids ...string) int {
	n := 0
	for _, c := range lib.Cases() {
		for _, v := range present.FacetIDs(&c, facet) {
			if contains(ids, v) {
				n++
				break
			}
		}
	}
	return n
}

func TestRoutes(t *testing.T) {
	s := testServer(t)
	lib := s.opts.Library
	total := len(lib.Cases())
	rep := s.opts.Report
	tests := []struct {
		path   string
		status int
		want   []string
	}{
		{"/", http.StatusFound, nil},
		{"/cases", 200, []string{fmt.Sprintf("1 to %d of %d cases", min(total, defaultPerPage), total), `role="search"`, "Check your cluster for this"}},
		{"/checks", 200, []string{"host-binary-glibc", "version-skew"}},
		{"/report", 200, []string{fmt.Sprintf("%d findings", len(rep.Findings)), "demo cluster", `name="severity"`}},
		{"/assets/style.css", 200, []string{"prefers-color-scheme: dark", "@media print"}},
		{"/assets/app.js", 200, []string{"use strict"}},
		{"/cases?component=nope", 400, []string{"Unknown component &#34;nope&#34;", "cni-plugin"}},
		{"/cases?root-cause=x&component=cni-plugin", 400, []string{"Unknown root cause"}},
		{"/cases?page=999", 404, []string{"Page 999 is past the end", "Go to page"}},
		{"/cases?page=0", 400, []string{"pages are numbered from 1"}},
		{"/cases?page=abc", 400, []string{"not a page number"}},
		{"/cases?per=1000000", 400, []string{"Page size &#34;1000000&#34; is out of range: use 1 to 100"}},
		{"/cases?per=-1", 400, []string{"out of range"}},
		{"/cases?sort=random", 400, []string{"Unknown sort"}},
		{"/cases/no-such-case", 404, []string{"There is no case"}},
		{"/cases/azure-cni", 404, []string{"/cases/azure-cni-v2-glibc"}},
		{"/checks/no-such-check", 404, []string{"There is no check"}},
		{"/report?severity=urgent", 400, []string{"unknown severity"}},
		{"/report?r=deadbeef", 404, []string{"no uploaded report"}},
		{"/nowhere", 404, []string{"There is no page /nowhere"}},
	}
	for _, c := range lib.Cases() {
		tests = append(tests, struct {
			path   string
			status int
			want   []string
		}{"/cases/" + c.ID, 200, nil})
	}
	for _, c := range s.opts.Checks {
		tests = append(tests, struct {
			path   string
			status int
			want   []string
		}{"/checks/" + c.ID, 200, []string{"kubegap audit --checks " + c.ID}})
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			code, body := get(t, s, tc.path)
			if code != tc.status {
				t.Fatalf("GET %s: status %d, want %d\n%s", tc.path, code, tc.status, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s: body lacks %q", tc.path, w)
				}
			}
			if code >= 400 && !strings.Contains(body, `role="alert"`) {
				t.Errorf("GET %s: error page without an alert", tc.path)
			}
		})
	}
}

func TestCasesFacetsCountsAndPaging(t *testing.T) {
	s := testServer(t)
	lib := s.opts.Library
	// One component, then two: values within a facet are alternatives.
	one := countMatching(lib, library.FacetComponent, "cni-plugin")
	two := countMatching(lib, library.FacetComponent, "cni-plugin", "kubelet")
	if one == 0 || two <= one {
		t.Fatalf("library has %d cni-plugin and %d cni-plugin|kubelet cases; the test needs more", one, two)
	}
	_, body := get(t, s, "/cases?component=cni-plugin")
	if !strings.Contains(body, fmt.Sprintf("1 to %d of %d cases", min(one, defaultPerPage), one)) {
		t.Errorf("one component: status line missing for %d cases", one)
	}
	// The selected value links to the query without it, and its count is
	// the whole selection.
	if !strings.Contains(body, `href="/cases" class="on" aria-current="true"><span>CNI plugin and installer</span> <span class="count">`+fmt.Sprint(one)+`</span>`) {
		t.Errorf("selected facet value not marked with its count and a link that removes it")
	}
	_, body = get(t, s, "/cases?component=cni-plugin&component=kubelet")
	if !strings.Contains(body, fmt.Sprintf("of %d cases", two)) {
		t.Errorf("two components: want %d cases", two)
	}
	// Counts in other facets cover only the selected cases.
	c, _ := lib.Case("azure-cni-v2-glibc")
	rc := c.RootCause.Category
	_, body = get(t, s, "/cases?component=cni-plugin")
	want := 0
	for _, x := range lib.Cases() {
		if contains(x.Components, "cni-plugin") && x.RootCause.Category == rc {
			want++
		}
	}
	if !strings.Contains(body, fmt.Sprintf(`data-facet="rootCause" data-value="%s" href="/cases?root-cause=%s&amp;component=cni-plugin"><span>`, rc, rc)) ||
		!strings.Contains(body, fmt.Sprintf(`</span> <span class="count">%d</span>`, want)) {
		t.Errorf("root-cause count under the component filter: want %d", want)
	}

	// Paging: page 2 of 1 per page is the second newest case.
	all := lib.Cases()
	_, body = get(t, s, "/cases?per=1&page=2")
	if !strings.Contains(body, `data-case="`+all[1].ID+`"`) || strings.Contains(body, `data-case="`+all[0].ID+`"`) {
		t.Errorf("page 2 of size 1 should show only %s", all[1].ID)
	}
	if !strings.Contains(body, `rel="prev"`) || !strings.Contains(body, "page=3") {
		t.Errorf("pager lacks previous or next links")
	}
	// Oldest first reverses the order.
	_, body = get(t, s, "/cases?per=1&sort=oldest")
	if !strings.Contains(body, `data-case="`+all[len(all)-1].ID+`"`) {
		t.Errorf("oldest first should start with %s", all[len(all)-1].ID)
	}
	// Search: every word must appear.
	_, body = get(t, s, "/cases?q=glibc")
	res, _ := lib.Query(library.Query{Search: "glibc"})
	if res.Total == 0 || !strings.Contains(body, fmt.Sprintf("of %d cases", res.Total)) {
		t.Errorf("search glibc: want %d cases", res.Total)
	}
	_, body = get(t, s, "/cases?q=zzzznotaword")
	if !strings.Contains(body, "No case matches.") {
		t.Errorf("a search matching nothing should say so")
	}
}

func TestCasePage(t *testing.T) {
	s := testServer(t)
	for _, c := range s.opts.Library.Cases() {
		_, body := get(t, s, "/cases/"+c.ID)
		for _, src := range c.Sources {
			if !strings.Contains(html.UnescapeString(body), `href="`+src.URL+`"`) {
				t.Errorf("%s: source %s not linked", c.ID, src.URL)
			}
		}
		for _, h := range []string{"Symptoms", "Trigger", "Root cause", "Detection", "Remediation", "Lessons", "Sources"} {
			if !strings.Contains(body, "<h2>"+h+"</h2>") {
				t.Errorf("%s: section %s missing", c.ID, h)
			}
		}
		cs := present.ChecksCiting(s.opts.Checks, c.ID)
		if len(cs) > 0 {
			ids := make([]string, len(cs))
			for i, ch := range cs {
				ids[i] = ch.ID
			}
			if !strings.Contains(body, "kubegap audit --checks "+strings.Join(ids, ",")) || !strings.Contains(body, `id="agent-prompt"`) {
				t.Errorf("%s: audit command or agent prompt missing", c.ID)
			}
		} else if !strings.Contains(body, "No kubegap check covers this case yet.") {
			t.Errorf("%s: no check covers it, and the page does not say so", c.ID)
		}
	}
}

func TestReportFilter(t *testing.T) {
	s := testServer(t)
	rep := s.opts.Report
	high := rep.Summary.Count(finding.High)
	if high == 0 || high == len(rep.Findings) {
		t.Fatalf("demo report has %d high of %d findings; the filter test needs a mix", high, len(rep.Findings))
	}
	_, body := get(t, s, "/report?severity=HIGH")
	if got := strings.Count(body, "data-finding "); got != high {
		t.Errorf("severity=high shows %d findings, want %d", got, high)
	}
	if !strings.Contains(body, fmt.Sprintf("%d of %d findings", high, len(rep.Findings))) {
		t.Errorf("status line should say %d of %d", high, len(rep.Findings))
	}
	ns := "kube-system"
	want := 0
	for i := range rep.Findings {
		if contains(present.NewFinding(&rep.Findings[i], nil).Namespaces, ns) {
			want++
		}
	}
	_, body = get(t, s, "/report?namespace="+ns)
	if got := strings.Count(body, "data-finding "); got != want {
		t.Errorf("namespace=%s shows %d findings, want %d", ns, got, want)
	}
}

// hostileReport is a report whose every string is markup.
func hostileReport() *report.Report {
	x := "<script>alert(1)</script>"
	r := report.New(demoSource(), nil)
	r.Findings = append(r.Findings, finding.Finding{
		Check: "image-pull-always", Severity: finding.High, Title: x, Message: x,
		Objects:  []finding.ObjectRef{{APIVersion: "v1", Kind: "Pod", Namespace: x, Name: x}},
		Evidence: []string{x}, Remediation: x, Cases: []string{"daemonset-pull-always-nat-ratelimit", x},
	})
	r.Checks = append(r.Checks, report.CheckResult{ID: x, Status: report.NotEvaluated, Reason: x})
	r.Finish()
	return r
}

func TestReportContentIsEscaped(t *testing.T) {
	check := func(t *testing.T, body string) {
		t.Helper()
		if strings.Contains(body, "<script>alert(1)") {
			t.Fatalf("report content rendered as markup")
		}
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Fatalf("report content not shown as text")
		}
	}
	t.Run("server", func(t *testing.T) {
		o := testOptions(t)
		o.Report = hostileReport()
		s, err := NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		_, body := get(t, s, "/report")
		check(t, body)
	})
	t.Run("html report", func(t *testing.T) {
		var buf bytes.Buffer
		if err := WriteReportHTML(&buf, hostileReport(), testOptions(t).Library); err != nil {
			t.Fatal(err)
		}
		check(t, buf.String())
	})
}

func postReport(t *testing.T, h http.Handler, name string, data []byte, origin string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("report", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req := httptest.NewRequest("POST", "http://localhost:8080/report", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestUpload(t *testing.T) {
	s := testServer(t)
	good, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	rec := postReport(t, s, "mine.json", good, "http://localhost:8080")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("upload: status %d\n%s", rec.Code, rec.Body)
	}
	loc := rec.Header().Get("Location")
	code, body := get(t, s, loc)
	if code != 200 || !strings.Contains(body, "mine.json") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("GET %s after upload: %d", loc, code)
	}
	// The upload's page keeps its ID through a filter.
	u, _ := url.Parse(loc)
	if !strings.Contains(body, `name="r" value="`+u.Query().Get("r")+`"`) {
		t.Errorf("filter form lost the uploaded report's ID")
	}

	for _, tc := range []struct {
		name   string
		data   []byte
		origin string
		status int
		want   string
	}{
		{"not json", []byte("hello"), "", 400, "not a kubegap JSON report"},
		{"wrong kind", []byte(`{"apiVersion":"v1","kind":"Pod"}`), "", 400, "want kubegap.dev/v1alpha1"},
		{"bad severity", []byte(`{"apiVersion":"kubegap.dev/v1alpha1","kind":"AuditReport","findings":[{"severity":"dire"}]}`), "", 400, "unknown severity"},
		{"trailing", append(append([]byte{}, good...), []byte(`{}`)...), "", 400, "data after the report"},
		{"too big", bytes.Repeat([]byte(" "), MaxUploadBytes+2<<20), "", http.StatusRequestEntityTooLarge, "larger than"},
		{"other site", good, "https://evil.example", 403, "only from this server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := postReport(t, s, "x.json", tc.data, tc.origin)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) {
				t.Errorf("status %d, want %d with %q\n%.500s", rec.Code, tc.status, tc.want, rec.Body)
			}
		})
	}
}

func TestLoopbackHostOnly(t *testing.T) {
	s := testServer(t)
	for host, want := range map[string]int{"localhost:8080": 200, "127.0.0.1:8080": 200, "[::1]:8080": 200, "evil.example:8080": 421, "10.0.0.1": 421} {
		req := httptest.NewRequest("GET", "/cases", nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: status %d, want %d", host, rec.Code, want)
		}
	}
	s.LoopbackOnly = false
	req := httptest.NewRequest("GET", "/cases", nil)
	req.Host = "kubegap.example"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("with LoopbackOnly off, any host is served; got %d", rec.Code)
	}
}

func TestPagesWorkWithoutScript(t *testing.T) {
	// Facets, pager and search are plain links and a GET form.
	s := testServer(t)
	_, body := get(t, s, "/cases")
	for _, w := range []string{`<a data-nav data-facet="component" data-value="cni-plugin" href="/cases?component=cni-plugin">`, `<form class="search" role="search" method="get" action="/cases"`, `href="/cases?page=2"`} {
		if !strings.Contains(body, w) {
			t.Errorf("/cases lacks %s", w)
		}
	}
	_, body = get(t, s, "/report")
	if !strings.Contains(body, `<form class="filters" method="get" action="/report"`) {
		t.Errorf("/report filters are not a GET form")
	}
	if strings.Contains(body, "<script>") {
		t.Errorf("server pages must not carry inline script (the CSP forbids it)")
	}
}

func demoSource() snapshot.Source {
	return snapshot.Source{Type: snapshot.SourceFiles, Paths: []string{"<b>dump.yaml</b>"}}
}

func TestReportShowsGapsAfterFindings(t *testing.T) {
	o := testOptions(t)
	r := hostileReport()
	r.Source.Scope.Namespaces = []string{"payments"}
	r.Coverage = append(r.Coverage, snapshot.Coverage{Resource: "apps/v1/daemonsets", Status: snapshot.StatusForbidden, Message: "RBAC"})
	r.Checks = append(r.Checks, report.CheckResult{ID: "pdb-blocks-drain", Status: report.Partial,
		Rules: []report.RuleResult{{ID: "single-replica", Status: report.RuleSkipped, Reason: "no deployments read"},
			{ID: "daemonsets", Status: report.RulePartial, Missing: []string{"apps/v1/daemonsets"}}}})
	o.Report = r
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	_, body := get(t, s, "/report")
	// What was not looked at follows the findings, in proportion: one
	// line per resource, the scope, the checks left to explain.
	gaps, findings, checks := strings.Index(body, "Not everything was evaluated"), strings.Index(body, `id="findings-h"`), strings.Index(body, `id="checks-h"`)
	if gaps < 0 || gaps < findings || gaps > checks {
		t.Fatalf("gaps panel missing or not between the findings and the checks table (%d, %d, %d)", gaps, findings, checks)
	}
	for _, w := range []string{"namespace payments", "daemonsets</code>: forbidden — 1 check incomplete", "ClusterRole rule"} {
		if !strings.Contains(body[gaps:checks], w) {
			t.Errorf("gaps panel lacks %q", w)
		}
	}
	// A complete report has no such panel.
	_, body = get(t, testServer(t), "/report")
	if strings.Contains(body, "Not everything was evaluated") {
		t.Errorf("the demo report is complete, yet shows a gaps panel")
	}
}
