package web

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestUploadRefusesCrossOrigin: a browser's POST from any page but the
// server's own is refused with 403, whatever mix of Origin and
// Sec-Fetch-Site it carries; the server's own pages and clients that are
// not browsers (neither header) can upload.
func TestUploadRefusesCrossOrigin(t *testing.T) {
	s := testServer(t)
	good, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name           string
		origin, secFet string
		status         int
	}{
		{"sandboxed iframe elsewhere", "null", "cross-site", 403},
		{"opaque origin, old browser", "null", "", 403},
		// What the server's own form sends: its Referrer-Policy is
		// no-referrer, which makes a browser's POST say "Origin: null".
		{"the server's own page under no-referrer", "null", "same-origin", http.StatusSeeOther},
		{"another site", "https://evil.example", "cross-site", 403},
		{"another port of localhost", "http://localhost:9999", "same-site", 403},
		{"another port, old browser", "http://localhost:9999", "", 403},
		{"cross-site, Origin forged to match", "http://localhost:8080", "cross-site", 403},
		{"the server's own page", "http://localhost:8080", "same-origin", http.StatusSeeOther},
		{"the server's own page, old browser", "http://localhost:8080", "", http.StatusSeeOther},
		{"curl", "", "", http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := uploadRequest(t, "r.json", good)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.secFet != "" {
				req.Header.Set("Sec-Fetch-Site", tc.secFet)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d\n%.300s", rec.Code, tc.status, rec.Body)
			}
			if tc.status == 403 && !strings.Contains(rec.Body.String(), "only from this server") {
				t.Errorf("403 page does not say why:\n%.500s", rec.Body)
			}
		})
	}
}

func uploadRequest(t *testing.T, name string, data []byte) *http.Request {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	if err := mw.WriteField("note", "a field before the file"); err != nil {
		t.Fatal(err)
	}
	fw, err := mw.CreateFormFile("report", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = fw.Write(data)
	_ = mw.Close()
	req := httptest.NewRequest("POST", "http://localhost:8080/report", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return req
}

// tmpWatch wraps a request body and lists the directory at each read:
// whatever the handler writes there while it reads the upload is seen.
type tmpWatch struct {
	io.ReadCloser
	dir  string
	seen map[string]bool
}

func (w *tmpWatch) Read(p []byte) (int, error) {
	if es, err := os.ReadDir(w.dir); err == nil {
		for _, e := range es {
			w.seen[e.Name()] = true
		}
	}
	return w.ReadCloser.Read(p)
}

// TestUploadWritesNothingToTMPDIR: an upload is read into memory, never
// spooled to $TMPDIR (ParseMultipartForm writes a file part past 32 MB to
// a temporary file): not for a report past the limit, nor for one inside.
func TestUploadWritesNothingToTMPDIR(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := testServer(t)
	good, err := json.Marshal(hostileReport())
	if err != nil {
		t.Fatal(err)
	}
	// Just over the limit, but under the body limit the server sets: what
	// ParseMultipartForm spooled and then refused.
	over := append(append([]byte{}, good...), bytes.Repeat([]byte(" "), MaxUploadBytes+512<<10-len(good))...)
	inside := append(append([]byte{}, good...), bytes.Repeat([]byte(" "), 8<<20)...)
	for _, tc := range []struct {
		name   string
		data   []byte
		status int
	}{
		{"over the limit", over, http.StatusRequestEntityTooLarge},
		{"inside the limit", inside, http.StatusSeeOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := uploadRequest(t, "big.json", tc.data)
			watch := &tmpWatch{ReadCloser: req.Body, dir: tmp, seen: map[string]bool{}}
			req.Body = watch
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Errorf("status %d, want %d\n%.300s", rec.Code, tc.status, rec.Body)
			}
			if es, _ := os.ReadDir(tmp); len(es) > 0 || len(watch.seen) > 0 {
				t.Errorf("files in $TMPDIR during the upload: %v (after: %d)", watch.seen, len(es))
			}
		})
	}
}
