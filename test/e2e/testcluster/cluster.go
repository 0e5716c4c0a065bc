package testcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// The users every test cluster knows, authenticated by static bearer tokens.
const (
	// UserAdmin is in group system:masters and may do anything.
	UserAdmin = "admin"
	// UserReader is bound cluster-wide to every ClusterRole in
	// deploy/rbac.yaml: what kubegap asks its users to grant.
	UserReader = "reader"
	// UserNSViewer is bound to the built-in "view" ClusterRole in
	// ViewerNamespace only.
	UserNSViewer = "ns-viewer"
	// UserNobody is authenticated but bound to nothing beyond the
	// defaults every authenticated user gets (discovery, /version).
	UserNobody = "nobody"

	// ViewerNamespace is the one namespace UserNSViewer may read.
	ViewerNamespace = "viewer-home"

	// markerUser sends the audit-log marker requests; never returned by
	// Requests.
	markerUser = "testbed-marker"
)

// users lists the users a test may ask for, in a stable order.
func users() []string { return []string{UserAdmin, UserReader, UserNSViewer, UserNobody} }

// Cluster is a running test control plane. Its methods are safe for
// concurrent use by parallel tests.
type Cluster struct {
	// Host is the API server URL, https://127.0.0.1:PORT.
	Host string
	// Dir holds the cluster's files: process logs, the audit log and one
	// kubeconfig per user. It is removed at teardown.
	Dir string
	// BinDir holds the test-bed binaries: etcd, kube-apiserver, kubectl.
	BinDir string

	caData      []byte
	tokens      map[string]string
	kubeconfigs map[string]string
	clients     map[string]kubernetes.Interface

	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	mapper    *restmapper.DeferredDiscoveryRESTMapper

	auditPath string
	auditMu   sync.Mutex
	// auditScanned is the file offset up to which earlier marker searches
	// read; a new marker can only appear after it.
	auditScanned int64
	markerSeq    int64

	procs []*process
}

// suite is the one cluster of the test package; Main owns its life cycle.
// It is the package's only global state and exists because TestMain and
// the tests cannot share anything else.
type suite struct {
	once    sync.Once
	cluster *Cluster
	err     error
	main    bool
	// apiFlags are kube-apiserver flags the package added (MainWith).
	apiFlags []string
}

var current struct {
	mu sync.Mutex
	s  *suite
}

// Main runs the tests of a package against one test cluster and returns the
// exit code for os.Exit. The cluster starts when the first test calls Get,
// so a run that selects no cluster test starts nothing, and it is torn down
// after the last test, whatever the outcome.
func Main(m *testing.M) int { return MainWith(m) }

// MainWith is Main with kube-apiserver flags added to the test bed's own,
// for a package whose tests need the server configured otherwise: e.g.
// --runtime-config to serve a deprecated beta version.
func MainWith(m *testing.M, apiServerFlags ...string) int {
	s := &suite{main: true, apiFlags: apiServerFlags}
	current.mu.Lock()
	current.s = s
	current.mu.Unlock()

	code := m.Run()
	removeKubegap()

	current.mu.Lock()
	current.s = nil
	current.mu.Unlock()
	// Started or not, no later Get may start a cluster nobody tears down.
	s.once.Do(func() { s.err = fmt.Errorf("testcluster: the test run is over") })
	if s.cluster != nil {
		if err := s.cluster.stop(); err != nil {
			fmt.Fprintf(os.Stderr, "testcluster: teardown: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// Get returns the package's test cluster, starting it on first use. It
// fails the test when the package has no TestMain calling Main or when the
// cluster cannot start; it never skips.
func Get(t testing.TB) *Cluster {
	t.Helper()
	current.mu.Lock()
	s := current.s
	current.mu.Unlock()
	if s == nil {
		t.Fatal("testcluster: no cluster; the package needs func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }")
		return nil
	}
	s.once.Do(func() { s.cluster, s.err = start(s.apiFlags) })
	if s.err != nil {
		t.Fatalf("testcluster: %v", s.err)
	}
	return s.cluster
}

// Kubectl is the path of the test bed's kubectl, of the same version as
// its kube-apiserver.
func (c *Cluster) Kubectl() string { return filepath.Join(c.BinDir, "kubectl") }

// Config returns a fresh REST config for user; callers may change it.
func (c *Cluster) Config(t testing.TB, user string) *rest.Config {
	t.Helper()
	tok, ok := c.tokens[user]
	if !ok || user == markerUser {
		t.Fatalf("testcluster: unknown user %q (have %v)", user, users())
	}
	return c.config(tok)
}

func (c *Cluster) config(token string) *rest.Config {
	return &rest.Config{
		Host:            c.Host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: append([]byte(nil), c.caData...)},
		// Loading fixtures makes many requests; the server's inflight
		// limits are raised to match.
		QPS:   200,
		Burst: 400,
	}
}

// Client returns a typed clientset acting as user.
func (c *Cluster) Client(t testing.TB, user string) kubernetes.Interface {
	t.Helper()
	if cs, ok := c.clients[user]; ok && user != markerUser {
		return cs
	}
	t.Fatalf("testcluster: unknown user %q (have %v)", user, users())
	return nil
}

// Dynamic returns a dynamic client acting as user, for kinds without a
// typed client (CRs such as NetworkAttachmentDefinition).
func (c *Cluster) Dynamic(t testing.TB, user string) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(c.Config(t, user))
	if err != nil {
		t.Fatalf("testcluster: dynamic client for %s: %v", user, err)
	}
	return d
}

// Kubeconfig returns the path of a kubeconfig file that authenticates as
// user, for running the kubegap binary with --kubeconfig. Its one context
// is named "testbed-USER" and is the current context.
func (c *Cluster) Kubeconfig(t testing.TB, user string) string {
	t.Helper()
	p, ok := c.kubeconfigs[user]
	if !ok || user == markerUser {
		t.Fatalf("testcluster: unknown user %q (have %v)", user, users())
	}
	return p
}

// Freeze stops etcd and kube-apiserver (SIGSTOP) until the returned thaw
// is called (SIGCONT), so that a measurement that does not use the cluster
// does not share the CPUs with it: after serving a 100k-pod LIST, the API
// server spends seconds of CPU collecting its garbage. thaw is also run
// at the test's end, so a failed test leaves no stopped process behind.
func (c *Cluster) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			for _, p := range c.procs {
				if err := p.signal(syscall.SIGCONT); err != nil {
					t.Errorf("resuming %s: %v", p.name, err)
				}
			}
		})
	}
	t.Cleanup(thaw)
	for _, p := range c.procs {
		if err := p.signal(syscall.SIGSTOP); err != nil {
			thaw()
			t.Fatalf("stopping %s: %v", p.name, err)
		}
	}
	// SIGSTOP is delivered asynchronously: wait until the kernel reports
	// every process stopped, so that nothing answers after Freeze returns.
	for _, p := range c.procs {
		if err := p.waitStopped(5 * time.Second); err != nil {
			thaw()
			t.Fatalf("stopping %s: %v", p.name, err)
		}
	}
	return thaw
}
