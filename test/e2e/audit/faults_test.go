package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// faultProxy is a reverse proxy in front of the test bed's API server, as
// the reader user, that injects a fault into the requests fault picks: the
// failures of issue 28, over a real network path to a real API server.
type faultProxy struct {
	rp    *httputil.ReverseProxy
	mu    sync.Mutex
	fault func(w http.ResponseWriter, r *http.Request, n int) bool // true: answered
	seen  map[string]int
}

func (p *faultProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen[r.URL.Path]++
	n := p.seen[r.URL.Path]
	fault := p.fault
	p.mu.Unlock()
	if fault != nil && fault(w, r, n) {
		return
	}
	p.rp.ServeHTTP(w, r)
}

func (p *faultProxy) requests(path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[path]
}

// newFaultProxy starts the proxy and returns it with a kubeconfig that
// reaches the test bed only through it (the proxy holds the credentials).
func newFaultProxy(t *testing.T, c *testcluster.Cluster) (*faultProxy, string) {
	t.Helper()
	cfg := c.Config(t, testcluster.UserReader)
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{seen: map[string]int{}, rp: &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: rt,
		ErrorLog:  nil,
	}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: proxy, cluster: {server: %q}}]
users: [{name: through-proxy, user: {}}]
contexts: [{name: proxy, context: {cluster: proxy, user: through-proxy}}]
current-context: proxy
`, srv.URL)), 0o600)
	return p, kc
}

// runBounded runs kubegap with a deadline: a read that never ends fails
// the test instead of hanging it.
func runBounded(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testcluster.Kubegap(t), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("kubegap %v did not end within 3 minutes", args)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errOut.String()}
}

func status(w http.ResponseWriter, code int, reason string) bool {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":%q,"code":%d,"message":"injected by the test proxy"}`, reason, code)
	return true
}

// TestFaultsThroughAProxy: 404s after discovery, a dropped body, a
// repeating continue token and a 500 that does not go away, each injected
// between kubegap and the real API server. The faulted resources are
// unknown (error, never complete), no check with a rule needing them
// passes, the findings that do not depend on them stay, the run ends and
// prints no line beside its own, and every request that reached the API
// server is on the allow-list.
func TestFaultsThroughAProxy(t *testing.T) {
	c := loadDemo(t)
	proxy, kc := newFaultProxy(t, c)
	mark := c.Mark(t)
	base := runBounded(t, "audit", "--kubeconfig", kc, "-o", "json", "-q")
	if base.code != 1 {
		t.Fatalf("fault-free audit through the proxy: exit %d, want 1\n%s", base.code, base.stderr)
	}
	baseRep, baseFired := decode(t, base)

	cases := []struct {
		name    string
		fault   func(w http.ResponseWriter, r *http.Request, n int) bool
		faulted []snapshot.Resource
		// read: the fault is survived, the resource read in full.
		read bool
	}{
		{
			name: "404 on the LIST of pods",
			fault: func(w http.ResponseWriter, r *http.Request, _ int) bool {
				return r.URL.Path == "/api/v1/pods" && status(w, 404, "NotFound")
			},
			faulted: []snapshot.Resource{snapshot.Pods},
		},
		{
			name: "404 on the apps/v1 discovery document",
			fault: func(w http.ResponseWriter, r *http.Request, _ int) bool {
				return r.URL.Path == "/apis/apps/v1" && status(w, 404, "NotFound")
			},
			faulted: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments, snapshot.ReplicaSets, snapshot.StatefulSets},
		},
		{
			name: "500 on every LIST of daemonsets",
			fault: func(w http.ResponseWriter, r *http.Request, _ int) bool {
				return r.URL.Path == "/apis/apps/v1/daemonsets" && status(w, 500, "InternalError")
			},
			faulted: []snapshot.Resource{snapshot.DaemonSets},
		},
		{
			name: "a repeating continue token on pods",
			fault: func(w http.ResponseWriter, r *http.Request, _ int) bool {
				if r.URL.Path != "/api/v1/pods" {
					return false
				}
				// Ask for JSON, and hand out the same token on every page.
				r.Header.Set("Accept", "application/json")
				rec := httptest.NewRecorder()
				proxy.rp.ServeHTTP(rec, r)
				var list map[string]any
				if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil {
					return status(w, 500, "InternalError")
				}
				meta, _ := list["metadata"].(map[string]any)
				if meta == nil {
					meta = map[string]any{}
				}
				meta["continue"] = "the-same-token"
				list["metadata"] = meta
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(list)
				return true
			},
			faulted: []snapshot.Resource{snapshot.Pods},
		},
		{
			name: "the connection dropped mid-body, once",
			fault: func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path != "/api/v1/nodes" || n > 1 {
					return false
				}
				rec := httptest.NewRecorder()
				proxy.rp.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(body)))
				w.WriteHeader(rec.Code)
				w.Write(body[:len(body)/2])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			},
			faulted: []snapshot.Resource{snapshot.Nodes}, read: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			proxy.mu.Lock()
			proxy.fault, proxy.seen = tc.fault, map[string]int{}
			proxy.mu.Unlock()
			defer func() { proxy.mu.Lock(); proxy.fault = nil; proxy.mu.Unlock() }()
			r := runBounded(t, "audit", "--kubeconfig", kc, "-o", "json", "-q")
			if r.code == 2 {
				t.Fatalf("the audit failed as a whole: %s", r.stderr)
			}
			if r.stderr != "" {
				t.Errorf("stderr beside the report: %q", r.stderr)
			}
			rep, _ := decode(t, r)
			cov := map[string]string{}
			for _, c := range rep.Coverage {
				cov[c.Resource] = c.Status
			}
			for _, res := range tc.faulted {
				want := "error"
				if tc.read {
					want = "read"
				}
				if cov[res.String()] != want {
					t.Errorf("%s coverage %q, want %s", res, cov[res.String()], want)
				}
			}
			if tc.read {
				if r.code != base.code || len(rep.Findings) != len(baseRep.Findings) {
					t.Errorf("exit %d with %d findings, want %d with %d as without the fault", r.code, len(rep.Findings), base.code, len(baseRep.Findings))
				}
				return
			}
			// Every check that reads none of the faulted resources keeps
			// all its findings.
			kept := 0
			for id := range baseFired {
				c, _ := checks.Lookup(id)
				reads := false
				for _, in := range c.Reads {
					reads = reads || slices.Contains(tc.faulted, in.Resource)
				}
				if reads {
					continue
				}
				kept++
				if count(baseRep, id) != count(rep, id) {
					t.Errorf("check %s, which does not read %v, has %d findings, %d without the fault", id, tc.faulted, count(rep, id), count(baseRep, id))
				}
			}
			if kept == 0 {
				t.Error("no check with findings reads none of the faulted resources: the test tests nothing")
			}
			for _, ch := range rep.Checks {
				c, ok := checks.Lookup(ch.ID)
				if !ok || ch.Status != "pass" {
					continue
				}
				for _, rule := range check.RulesOf(c) {
					for _, need := range rule.Needs {
						for _, f := range tc.faulted {
							if need == f {
								t.Errorf("check %s passed while %s, which its rule %s needs, failed", ch.ID, f, rule.ID)
							}
						}
					}
				}
			}
			if n := proxy.requests("/api/v1/pods"); strings.Contains(tc.name, "continue") && n > 3 {
				t.Errorf("%d LISTs of pods for a repeating token, want the list stopped at the repeat", n)
			}
		})
	}
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
}

// TestHostileNamespaceSendsNothing: -n that is not a namespace name (it is
// spliced into every namespaced path) is refused with one line and exit 2,
// and the API server's audit log shows not one request.
func TestHostileNamespaceSendsNothing(t *testing.T) {
	c := testcluster.Get(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	mark := c.Mark(t)
	for _, ns := range []string{"../nodes/node-a/proxy", "kube-system/services/http:kube-dns:53/proxy", "../../x"} {
		for _, cmd := range []string{"audit", "snapshot"} {
			args := []string{cmd, "--kubeconfig", kc, "-n", ns, "-q"}
			if cmd == "snapshot" {
				args = append(args, "-o", filepath.Join(t.TempDir(), "s.json"))
			}
			r := runBounded(t, args...)
			if r.code != 2 || r.stdout != "" || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "is not a namespace name") {
				t.Errorf("%s -n %q: exit %d, stderr %q; want exit 2 and one line refusing it", cmd, ns, r.code, r.stderr)
			}
		}
	}
	if reqs := c.RequestsSince(t, mark, testcluster.UserReader); len(reqs) != 0 {
		t.Errorf("hostile namespaces reached the API server: %d requests, first %s %s", len(reqs), reqs[0].Verb, reqs[0].RequestURI)
	}
}

// count is how many findings of check id a report holds.
func count(rep report, id string) int {
	n := 0
	for _, raw := range rep.Findings {
		var f struct{ Check string }
		json.Unmarshal(raw, &f)
		if f.Check == id {
			n++
		}
	}
	return n
}
