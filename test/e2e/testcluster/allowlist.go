package testcluster

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// Allow says what a run may ask the API server, beyond the catalogue.
type Allow struct {
	// Namespace is the run's -n: every namespaced request must be in it.
	Namespace string
	// AnyDiscovery admits the discovery document of any group/version,
	// not only the catalogue's: kubectl api-resources (in a recipe) reads
	// them all.
	AnyDiscovery bool
}

// CheckRequests fails t for every request that is not on kubegap's
// allow-list: GET, LIST or WATCH of a resource of the catalogue
// (snapshot.Known) at its own path, never a subresource (proxy, log,
// exec, ...) nor a Secret; ConfigMaps only by GET of the names kubegap
// names; the discovery documents (/version, /api, /apis, /api/v1,
// /apis/GROUP/VERSION) and the catalogue's non-resource URLs (/metrics)
// as non-resource GETs. It returns the number of
// requests checked, so a caller can tell "all allowed" from "none".
func CheckRequests(t testing.TB, reqs []Request, allow Allow) int {
	t.Helper()
	known := map[[2]string]snapshot.Resource{}
	discovery := map[string]bool{"/version": true, "/api": true, "/apis": true}
	for _, r := range snapshot.Known() {
		if r.NonResourceURL != "" {
			discovery[r.NonResourceURL] = true // GET /metrics
			continue
		}
		known[[2]string{r.Group, r.Resource}] = r
		discovery[discoveryPath(r)] = true
	}
	for _, q := range reqs {
		u, err := url.ParseRequestURI(q.RequestURI)
		if err != nil {
			t.Errorf("request URI %q does not parse: %v", q.RequestURI, err)
			continue
		}
		path := u.Path
		if q.Resource == "" {
			ok := q.Verb == "get" && (discovery[path] || allow.AnyDiscovery && isDiscoveryPath(path))
			if !ok {
				t.Errorf("a request outside the allow-list: %s %s (not a documented non-resource URL)", q.Verb, q.RequestURI)
			}
			continue
		}
		res, ok := known[[2]string{q.APIGroup, q.Resource}]
		switch {
		case !ok:
			t.Errorf("a request outside the catalogue: %s %s", q.Verb, q.RequestURI)
			continue
		case q.Subresource != "":
			t.Errorf("a subresource request: %s %s", q.Verb, q.RequestURI)
			continue
		case q.Resource == "secrets":
			t.Errorf("a Secret read: %s %s", q.Verb, q.RequestURI)
			continue
		}
		want := discoveryPath(res)
		// The audit log gives a Namespace object's own name as its
		// namespace: only namespaced resources have the segment.
		if res.Namespaced && q.Namespace != "" {
			want += "/namespaces/" + q.Namespace
		}
		want += "/" + res.Resource
		switch {
		case res.Named:
			if q.Verb != "get" || !slices.Contains(snapshot.NamedConfigMaps, q.Namespace+"/"+q.Name) || path != want+"/"+q.Name {
				t.Errorf("a ConfigMap read kubegap does not name: %s %s", q.Verb, q.RequestURI)
			}
			continue
		case q.Verb != "list" && q.Verb != "watch" && !(q.Verb == "get" && q.Name != ""):
			t.Errorf("a request that is not a read: %s %s", q.Verb, q.RequestURI)
			continue
		}
		if q.Name != "" {
			want += "/" + q.Name
		}
		if path != want {
			t.Errorf("a request at a path that is not its resource's: %s %s (want %s)", q.Verb, q.RequestURI, want)
		}
		if allow.Namespace != "" && res.Namespaced && q.Namespace != allow.Namespace {
			t.Errorf("a namespaced request outside namespace %s: %s %s", allow.Namespace, q.Verb, q.RequestURI)
		}
	}
	return len(reqs)
}

func discoveryPath(r snapshot.Resource) string {
	if r.Group == "" {
		return "/api/" + r.Version
	}
	return "/apis/" + r.Group + "/" + r.Version
}

// isDiscoveryPath: /api/VERSION or /apis/GROUP/VERSION, nothing below.
func isDiscoveryPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	return parts[0] == "api" && len(parts) == 2 || parts[0] == "apis" && len(parts) == 3
}
