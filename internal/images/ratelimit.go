package images

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Registries answer 429 Too Many Requests (Docker Hub's pull limits, a
// mirror under load) and sometimes 503, with Retry-After saying how long
// to wait (RFC 9110 §10.2.3: seconds or an HTTP date). go-containerregistry
// retries 429 with its own short backoff but does not read Retry-After, so
// an audit inspecting dozens of images would hammer a registry that asked
// it to wait. retryAfterTransport sits under it and honours the header for
// the whole registry: once a host says wait, every request to it waits.
const (
	// maxRetryAfter is the longest wait honoured; a registry asking for
	// more gets its 429 passed up, and the image fails with that error.
	maxRetryAfter = 60 * time.Second
	// retryAttempts caps the retries of one request.
	retryAttempts = 4
	// defaultRetryAfter is the wait when a 429 carries no Retry-After.
	defaultRetryAfter = time.Second
)

type retryAfterTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	until map[string]time.Time // host -> no request before
	// now is the clock; tests keep the real one.
	now func() time.Time
}

func newRetryAfterTransport(next http.RoundTripper) *retryAfterTransport {
	return &retryAfterTransport{next: next, until: map[string]time.Time{}, now: time.Now}
}

func (t *retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	host := req.URL.Host
	for attempt := 0; ; attempt++ {
		if err := t.wait(req.Context(), host); err != nil {
			return nil, err
		}
		resp, err := t.next.RoundTrip(req)
		if err != nil || attempt >= retryAttempts || !retryable(req, resp) {
			return resp, err
		}
		d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), t.now())
		if !ok {
			if resp.StatusCode != http.StatusTooManyRequests {
				return resp, nil // a 503 without Retry-After is ggcr's to retry
			}
			d = defaultRetryAfter << attempt
		}
		if d > maxRetryAfter {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		t.pause(host, t.now().Add(d))
	}
}

// retryable: a body-less read answered with 429, or 503 with Retry-After.
func retryable(req *http.Request, resp *http.Response) bool {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		return false
	}
	if req.Body != nil && req.Body != http.NoBody {
		return false
	}
	return resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "")
}

func (t *retryAfterTransport) pause(host string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if until.After(t.until[host]) {
		t.until[host] = until
	}
}

// wait blocks until the host's pause is over or ctx ends.
func (t *retryAfterTransport) wait(ctx context.Context, host string) error {
	t.mu.Lock()
	until := t.until[host]
	t.mu.Unlock()
	d := until.Sub(t.now())
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseUint(v, 10, 32); err == nil {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now)), true
	}
	return 0, false
}
