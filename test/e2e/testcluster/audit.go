package testcluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// markerWait bounds how long a marker request may take to reach the file.
const markerWait = 30 * time.Second

// markerPrefix names the ConfigMaps marker requests ask for (and are
// refused: the marker user has no rights, which the log records anyway).
const markerPrefix = "kubegap-audit-marker-"

// Request is one completed API request, from the audit log.
type Request struct {
	// User is the authenticated user name, e.g. "reader".
	User string
	// Verb is the Kubernetes verb (get, list, watch, create, update,
	// patch, delete, deletecollection) or, for non-resource URLs such as
	// /version, the lower-case HTTP method.
	Verb string
	// APIGroup is the resource's group, "" for the core group.
	APIGroup string
	// Resource is the plural resource, e.g. "pods"; empty for
	// non-resource URLs.
	Resource string
	// Subresource is e.g. "status" or "log", empty for the object itself.
	Subresource string
	// Namespace and Name are the object's; empty when not applicable.
	Namespace string
	Name      string
	// RequestURI is the path and query as sent.
	RequestURI string
	// UserAgent is the client's User-Agent header.
	UserAgent string
	// Code is the HTTP status of the response.
	Code int
	// Time is when the response completed.
	Time time.Time
	// APIVersion is the group/version the request named ("v1",
	// "apps/v1"); empty for non-resource URLs.
	APIVersion string
	// Annotations are the event's audit annotations, e.g.
	// "k8s.io/deprecated": "true" on a request to a deprecated version.
	Annotations map[string]string
}

// Mark is a position in the audit log; see Cluster.Mark.
type Mark struct{ offset int64 }

// Requests returns every request user made so far ("" for every user but
// the test bed's own marker), oldest first. Requests that returned before
// the call are guaranteed to be included: it sends a marker request and
// reads the log up to it.
func (c *Cluster) Requests(t testing.TB, user string) []Request {
	t.Helper()
	return c.RequestsSince(t, Mark{}, user)
}

// Mark returns the current end of the audit log, so that RequestsSince can
// look only at what a test did after it. The cluster is shared by the
// package's tests; a mark keeps one test's assertions about its own
// requests.
func (c *Cluster) Mark(t testing.TB) Mark {
	t.Helper()
	end, err := c.syncAudit()
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	return Mark{offset: end}
}

// RequestsSince is Requests limited to requests logged after m.
func (c *Cluster) RequestsSince(t testing.TB, m Mark, user string) []Request {
	t.Helper()
	end, err := c.syncAudit()
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	reqs, err := readAudit(c.auditPath, m.offset, end, user)
	if err != nil {
		t.Fatalf("testcluster: reading the audit log: %v", err)
	}
	return reqs
}

// AuditLogPath returns the path of the API server's audit log (JSON lines
// of audit.k8s.io/v1 Events), for tests that need more than Requests.
func (c *Cluster) AuditLogPath() string { return c.auditPath }

// syncAudit sends a uniquely named marker request and waits for its event,
// returning the file offset just past it. With --audit-log-mode=blocking an
// event is written by the request's own handler as it finishes, so a request
// the client saw complete before the marker was sent has its event in the
// file before the marker's: the marker bounds the log without sleeping.
func (c *Cluster) syncAudit() (int64, error) {
	c.auditMu.Lock()
	defer c.auditMu.Unlock()
	c.markerSeq++
	name := markerPrefix + strconv.FormatInt(c.markerSeq, 10)
	ctx, cancel := context.WithTimeout(context.Background(), markerWait)
	defer cancel()
	// Refused with 403, which is all a marker needs.
	_, _ = c.clients[markerUser].CoreV1().ConfigMaps(metav1.NamespaceDefault).Get(ctx, name, metav1.GetOptions{})

	needle := []byte(`/configmaps/` + name + `"`)
	for {
		end, found, err := scanFor(c.auditPath, c.auditScanned, needle)
		if err != nil {
			return 0, err
		}
		if found {
			c.auditScanned = end
			return end, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("audit marker %s not logged within %s", name, markerWait)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// scanFor reads complete lines of path from offset and returns the offset
// just past the first line containing needle.
func scanFor(path string, offset int64, needle []byte) (int64, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, false, fmt.Errorf("seeking the audit log: %w", err)
	}
	r := bufio.NewReaderSize(f, 1<<20)
	pos := offset
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			// EOF mid-line: the rest is still being written.
			if errors.Is(err, io.EOF) {
				return pos, false, nil
			}
			return 0, false, fmt.Errorf("reading the audit log: %w", err)
		}
		pos += int64(len(line))
		if bytes.Contains(line, needle) {
			return pos, true, nil
		}
	}
}

// auditEvent is the part of an audit.k8s.io/v1 Event that Request needs.
type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
		APIVersion  string `json:"apiVersion"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	StageTimestamp time.Time         `json:"stageTimestamp"`
	Annotations    map[string]string `json:"annotations"`
}

// readAudit parses the ResponseComplete events between two offsets.
func readAudit(path string, from, to int64, user string) ([]Request, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseAudit(io.NewSectionReader(f, from, to-from), user)
}

// parseAudit turns audit log lines into Requests of user ("" for all but
// the marker user).
func parseAudit(r io.Reader, user string) ([]Request, error) {
	var out []Request
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ev auditEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		if ev.Stage != "ResponseComplete" || ev.User.Username == markerUser {
			continue
		}
		if user != "" && ev.User.Username != user {
			continue
		}
		req := Request{
			User:        ev.User.Username,
			Verb:        ev.Verb,
			RequestURI:  ev.RequestURI,
			UserAgent:   ev.UserAgent,
			Time:        ev.StageTimestamp,
			Annotations: ev.Annotations,
		}
		if o := ev.ObjectRef; o != nil {
			req.APIGroup, req.Resource, req.Subresource = o.APIGroup, o.Resource, o.Subresource
			req.Namespace, req.Name = o.Namespace, o.Name
			req.APIVersion = o.APIVersion
			if o.APIGroup != "" {
				req.APIVersion = o.APIGroup + "/" + o.APIVersion
			}
		}
		if ev.ResponseStatus != nil {
			req.Code = ev.ResponseStatus.Code
		}
		out = append(out, req)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
