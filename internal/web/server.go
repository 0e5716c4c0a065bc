package web

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
	"github.com/kubegap/kubegap/internal/report"
)

// Upload limits: a report of a 100k-pod cluster is a few MB of JSON.
const (
	MaxUploadBytes = 32 << 20
	keepUploads    = 4
)

// Options configure the pages.
type Options struct {
	Library *library.Library
	// Checks is the registry (checks.All()).
	Checks []check.Check
	// Report is shown on /report: the demo's, or one given with --report.
	Report *report.Report
	// ReportName labels it, e.g. the file name or "demo cluster".
	ReportName string
}

// Server serves the pages. It holds uploaded reports in memory only and
// writes nothing anywhere.
type Server struct {
	opts Options
	r    *renderer
	mux  *http.ServeMux
	// LoopbackOnly refuses requests whose Host is not a loopback name, so
	// that a web page elsewhere cannot reach the server by DNS rebinding.
	LoopbackOnly bool

	mu      sync.Mutex
	uploads []upload
}

type upload struct {
	id   string
	name string
	rep  *report.Report
}

// NewServer builds the handler.
func NewServer(opts Options) (*Server, error) {
	if opts.Library == nil {
		return nil, errors.New("web: no library")
	}
	r, err := newRenderer()
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, r: r, mux: http.NewServeMux(), LoopbackOnly: true}
	s.mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, "/cases", http.StatusFound)
	})
	s.mux.HandleFunc("GET /cases", s.cases)
	s.mux.HandleFunc("GET /cases/{id}", s.caseDetail)
	s.mux.HandleFunc("GET /checks", s.checks)
	s.mux.HandleFunc("GET /checks/{id}", s.checkDetail)
	s.mux.HandleFunc("GET /report", s.report)
	s.mux.HandleFunc("POST /report", s.upload)
	s.mux.HandleFunc("GET /assets/style.css", asset("text/css; charset=utf-8", styleCSS))
	s.mux.HandleFunc("GET /assets/app.js", asset("text/javascript; charset=utf-8", appJS))
	s.mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		s.fail(w, &badRequest{status: 404, msg: fmt.Sprintf("There is no page %s.", req.URL.Path),
			links: []textLink{{"Incident library", "/cases"}, {"Checks", "/checks"}, {"Report", "/report"}}})
	})
	return s, nil
}

var serverLinks = links{mode: modeServer}

// ServeHTTP answers one request with the security headers every page
// carries: no inline script or style, nothing from another origin.
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if s.LoopbackOnly && !loopbackHost(req.Host) {
		s.fail(w, &badRequest{status: http.StatusMisdirectedRequest, msg: "This kubegap server answers only requests to localhost, 127.0.0.1 or [::1]."})
		return
	}
	s.mux.ServeHTTP(w, req)
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func asset(ctype, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = io.WriteString(w, body)
	}
}

func (s *Server) page(w http.ResponseWriter, status int, kind string, p *page) {
	p.L = serverLinks
	var buf bytes.Buffer
	if err := s.r.render(&buf, kind, p); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, e *badRequest) {
	heading := "Not found"
	switch e.status {
	case http.StatusBadRequest:
		heading = "Bad request"
	case http.StatusRequestEntityTooLarge:
		heading = "Report too large"
	case http.StatusMisdirectedRequest:
		heading = "Wrong host"
	case http.StatusForbidden:
		heading = "Upload refused"
	}
	s.page(w, e.status, "error", &page{Title: heading, Data: errorView{Heading: heading, Message: e.msg, Links: e.links}})
}

func (s *Server) cases(w http.ResponseWriter, req *http.Request) {
	tax := s.opts.Library.Taxonomy()
	q, bad := parseCasesQuery(req.URL.Query(), &tax)
	if bad != nil {
		bad.links = append(bad.links, textLink{"All cases", "/cases"})
		s.fail(w, bad)
		return
	}
	v, bad := casesPage(s.opts.Library, s.opts.Checks, serverLinks, q, false)
	if bad != nil {
		s.fail(w, bad)
		return
	}
	s.page(w, http.StatusOK, "cases", &page{Title: "Incident library", Nav: "cases", Data: v})
}

func (s *Server) caseDetail(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	c, ok := s.opts.Library.Case(id)
	if !ok {
		s.fail(w, unknownCase(s.opts.Library, serverLinks, id))
		return
	}
	s.page(w, http.StatusOK, "case", &page{Title: c.Title, Nav: "cases", Data: casePage(s.opts.Library, s.opts.Checks, &c)})
}

func (s *Server) checks(w http.ResponseWriter, _ *http.Request) {
	s.page(w, http.StatusOK, "checks", &page{Title: "Checks", Nav: "checks", Data: checksPage(s.opts.Library, s.opts.Checks)})
}

func (s *Server) checkDetail(w http.ResponseWriter, req *http.Request) {
	id := req.PathValue("id")
	for _, c := range s.opts.Checks {
		if c.ID == id {
			s.page(w, http.StatusOK, "check", &page{Title: c.Title, Nav: "checks", Data: checkPage(s.opts.Library, c)})
			return
		}
	}
	s.fail(w, &badRequest{status: 404, msg: fmt.Sprintf("There is no check %q.", id), links: []textLink{{"All checks", "/checks"}}})
}

func (s *Server) report(w http.ResponseWriter, req *http.Request) {
	v := req.URL.Query()
	rep, name, id := s.opts.Report, s.opts.ReportName, v.Get("r")
	if id != "" {
		u, ok := s.uploaded(id)
		if !ok {
			s.fail(w, &badRequest{status: 404, msg: fmt.Sprintf("There is no uploaded report %q: this server keeps the last %d uploads in memory, and a restart forgets them.", id, keepUploads),
				links: []textLink{{"The server's report", "/report"}}})
			return
		}
		rep, name = u.rep, u.name
	}
	if rep == nil {
		s.fail(w, &badRequest{status: 404, msg: "This server has no report: start it with --report FILE, or upload one.", links: []textLink{{"Incident library", "/cases"}}})
		return
	}
	f := reportFilter{severity: v.Get("severity"), check: v.Get("check"), namespace: v.Get("namespace")}
	if f.severity != "" {
		sev, err := finding.ParseSeverity(f.severity)
		if err != nil {
			s.fail(w, &badRequest{status: 400, msg: err.Error() + ".", links: []textLink{{"The whole report", serverLinks.Report(reportIDQuery(id))}}})
			return
		}
		f.severity = sev.String()
	}
	rv := reportPage(rep, s.opts.Library, f, false)
	rv.Name, rv.ReportID, rv.Upload, rv.UploadLimit = name, id, true, fmt.Sprintf("%d MB", MaxUploadBytes>>20)
	s.page(w, http.StatusOK, "report", &page{Title: "Audit report", Nav: "report", Data: rv})
}

func reportIDQuery(id string) string {
	if id == "" {
		return ""
	}
	return "r=" + id
}

// crossOrigin refuses a POST that a browser sends from a page of another
// origin: Sec-Fetch-Site other than same-origin (or none, the user's own
// navigation), or, from a browser too old to send it, an Origin whose
// host is not this server's. A sandboxed iframe anywhere sends "Origin:
// null" and "Sec-Fetch-Site: cross-site", and is refused; a page on
// another port of localhost is same-site but not same-origin, and is
// refused too. The server's own form sends "Origin: null" as well (its
// pages carry Referrer-Policy: no-referrer) but "Sec-Fetch-Site:
// same-origin", which no page can forge. A request with neither header
// is not from a browser (curl) and is let through.
var crossOrigin = http.NewCrossOriginProtection()

// upload reads a JSON report from a form, checks it and keeps it in
// memory; the browser is sent to its page. The form is read part by part
// from the body: ParseMultipartForm (and FormFile) would write a file part
// past 32 MB to a temporary file, and nothing here is written to disk.
func (s *Server) upload(w http.ResponseWriter, req *http.Request) {
	back := []textLink{{"Back to the report", "/report"}}
	if err := crossOrigin.Check(req); err != nil {
		s.fail(w, &badRequest{status: 403, msg: "Reports can be uploaded only from this server's own pages.", links: back})
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, MaxUploadBytes+1<<20)
	name, data, err := readUpload(req)
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig) || errors.Is(err, errUploadTooLarge):
		s.fail(w, &badRequest{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("The upload is larger than %d MB.", MaxUploadBytes>>20), links: back})
		return
	case err != nil:
		s.fail(w, &badRequest{status: 400, msg: "No report file in the upload: choose a JSON file written by kubegap audit -o json.", links: back})
		return
	}
	rep, err := ReadReport(bytes.NewReader(data))
	if err != nil {
		s.fail(w, &badRequest{status: 400, msg: name + ": " + err.Error(), links: back})
		return
	}
	id := s.keep(name, rep)
	http.Redirect(w, req, "/report?r="+id, http.StatusSeeOther)
}

var errUploadTooLarge = errors.New("upload too large")

// readUpload returns the file name and the content of the form's "report"
// file part, read into memory, at most MaxUploadBytes of it. Other parts
// are passed over.
func readUpload(req *http.Request) (name string, data []byte, err error) {
	mr, err := req.MultipartReader()
	if err != nil {
		return "", nil, err
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			return "", nil, err // io.EOF: no report part
		}
		if part.FormName() != "report" || part.FileName() == "" {
			continue // NextPart discards what is left of it
		}
		data, err := io.ReadAll(io.LimitReader(part, MaxUploadBytes+1))
		if err != nil {
			return "", nil, err
		}
		if len(data) > MaxUploadBytes {
			return "", nil, errUploadTooLarge
		}
		return part.FileName(), data, nil
	}
}

// ReadReport reads and checks a JSON audit report. Unknown fields are
// allowed (the format grows by new fields); a wrong kind, a bad severity
// or trailing data is an error.
func ReadReport(r io.Reader) (*report.Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reading the report: %w", err)
	}
	if len(data) > MaxUploadBytes {
		return nil, fmt.Errorf("the report is larger than %d MB", MaxUploadBytes>>20)
	}
	var rep report.Report
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("not a kubegap JSON report: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a kubegap JSON report: data after the report")
	}
	if rep.APIVersion != report.APIVersion || rep.Kind != report.Kind {
		return nil, fmt.Errorf("not a kubegap JSON report: apiVersion %q, kind %q (want %s, %s)", rep.APIVersion, rep.Kind, report.APIVersion, report.Kind)
	}
	report.ForgetObjectPlaces(rep.Findings)
	for i := range rep.Suppressed {
		report.ForgetObjectPlaces([]finding.Finding{rep.Suppressed[i].Finding})
	}
	return &rep, nil
}

func (s *Server) keep(name string, rep *report.Report) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploads = append(s.uploads, upload{id: id, name: name, rep: rep})
	if len(s.uploads) > keepUploads {
		s.uploads = s.uploads[len(s.uploads)-keepUploads:]
	}
	return id
}

func (s *Server) uploaded(id string) (upload, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.uploads {
		if u.id == id {
			return u, true
		}
	}
	return upload{}, false
}
