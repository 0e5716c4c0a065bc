// Package publish writes kubegap's report objects (-o policyreport or -o
// openreports) into a cluster, replacing the last run's and deleting those
// of namespaces that no longer have findings. It is the only part of
// kubegap that writes, and it writes through a transport that refuses,
// before a byte leaves the process, every request but get, list, create,
// update, patch and delete on those report resources; the audit keeps its
// GET-only transport (internal/cluster).
package publish

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/report/policyreport"
)

// ErrRefused is returned for any request the publisher may not send.
type ErrRefused struct {
	Method, URL, Why string
}

func (e *ErrRefused) Error() string {
	return fmt.Sprintf("kubegap publish writes only its report objects: refused %s %s before sending it (%s)", e.Method, e.URL, e.Why)
}

// reportsOnly lets through only requests on the report resources of one
// format.
type reportsOnly struct {
	next http.RoundTripper
	// prefix is /apis/GROUP/VERSION/ of the format.
	prefix              string
	namespaced, cluster string
}

// Verbs the publisher sends, by HTTP method and whether the path names an
// object: get (GET one), list (GET the collection), create (POST the
// collection), update (PUT one), patch (PATCH one, server-side apply
// included), delete (DELETE one). Not watch, not deletecollection, no
// subresource.
func (t reportsOnly) allowed(method string, u *url.URL) (bool, string) {
	if q := u.Query().Get("watch"); q != "" && q != "false" && q != "0" {
		return false, "watch is not a publisher's verb"
	}
	tail, ok := strings.CutPrefix(u.EscapedPath(), t.prefix)
	if !ok {
		return false, "not the report API " + strings.TrimSuffix(t.prefix, "/")
	}
	parts := strings.Split(tail, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return false, "not a report resource path"
		}
	}
	var resource string
	var named bool
	switch {
	case len(parts) == 1 || len(parts) == 2:
		resource, named = parts[0], len(parts) == 2
		switch resource {
		case t.cluster:
		case t.namespaced:
			// The namespaced reports of every namespace: list only, to
			// find the stale ones.
			if named || method != http.MethodGet {
				return false, "the cross-namespace path of " + t.namespaced + " is for listing"
			}
		default:
			return false, "resource " + resource + " is not a report resource"
		}
	case (len(parts) == 3 || len(parts) == 4) && parts[0] == "namespaces":
		resource, named = parts[2], len(parts) == 4
		if resource != t.namespaced {
			return false, "resource " + resource + " is not a report resource"
		}
	default:
		return false, "not a report resource path (no subresource is written)"
	}
	switch method {
	case http.MethodGet:
		return true, ""
	case http.MethodPost:
		if !named {
			return true, ""
		}
	case http.MethodPut, http.MethodPatch, http.MethodDelete:
		if named {
			return true, ""
		}
		if method == http.MethodDelete {
			return false, "deletecollection is not a publisher's verb"
		}
	}
	return false, method + " is not a publisher's verb here"
}

func (t reportsOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	if ok, why := t.allowed(req.Method, req.URL); !ok {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, &ErrRefused{Method: req.Method, URL: req.URL.Redacted(), Why: why}
	}
	return t.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go reach the transport underneath to
// cancel requests; it adds no way to send anything.
func (t reportsOnly) WrappedRoundTripper() http.RoundTripper { return t.next }

// ReportsOnly returns a copy of cfg whose transport refuses every request
// but get, list, create, update, patch and delete on format f's report
// resources (the namespaced report and the cluster report). It wraps
// outermost, after auth and any other wrapper, so nothing added later can
// bypass it. A server behind a path prefix (cfg.Host with a path) is
// refused too: the paths checked are the API's own.
func ReportsOnly(cfg *rest.Config, f policyreport.Format) *rest.Config {
	ns, cl := policyreport.Resources(f)
	t := reportsOnly{
		prefix:     "/apis/" + ns.Group + "/" + ns.Version + "/",
		namespaced: ns.Resource,
		cluster:    cl.Resource,
	}
	c := rest.CopyConfig(cfg)
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		w := t
		w.next = rt
		return w
	})
	return c
}
