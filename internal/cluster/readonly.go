// Package cluster reads a live cluster into a snapshot, read-only: every
// request goes through a transport that refuses any method but GET before a
// byte leaves the process, whatever RBAC would allow.
package cluster

import (
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// ErrWriteRefused is returned for any request that is not a GET.
type ErrWriteRefused struct {
	Method, URL string
}

func (e *ErrWriteRefused) Error() string {
	return fmt.Sprintf("kubegap is read-only: refused %s %s before sending it", e.Method, e.URL)
}

// readOnlyTransport refuses every method but GET.
type readOnlyTransport struct {
	next http.RoundTripper
}

func (t readOnlyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &ErrWriteRefused{Method: req.Method, URL: req.URL.Redacted()}
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the transport underneath to
// cancel requests; it adds no way to send anything.
func (t readOnlyTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// ReadOnly returns a copy of cfg whose transport refuses every method but
// GET. It wraps outermost, after auth and any other wrapper, so nothing
// added later can bypass it.
func ReadOnly(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper { return readOnlyTransport{next: rt} })
	return c
}
