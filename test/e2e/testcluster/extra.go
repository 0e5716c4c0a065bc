package testcluster

import (
	"os"
	"testing"
)

// StartAnother starts a second, independent test cluster, for a test that
// needs more than one (kubegap audit --contexts). Unlike Get's, it belongs
// to the test: it is stopped and its directory removed when the test ends,
// or stopped earlier with Stop. It takes as long to start as the first.
func StartAnother(t testing.TB) *Cluster {
	t.Helper()
	c, err := start()
	if err != nil {
		t.Fatalf("testcluster: another cluster: %v", err)
	}
	t.Cleanup(func() {
		if err := c.stop(); err != nil {
			t.Errorf("testcluster: stopping another cluster: %v", err)
		}
	})
	return c
}

// Stop ends a cluster from StartAnother while the test runs: kube-apiserver
// and etcd exit, so what it was serving is refused from then on. Its files
// stay until the test ends. Get's cluster serves the whole package and
// must not be stopped.
func (c *Cluster) Stop(t testing.TB) {
	t.Helper()
	for i := len(c.procs) - 1; i >= 0; i-- {
		if err := c.procs[i].stop(stopGrace); err != nil {
			t.Errorf("testcluster: %v", err)
		}
	}
}

// CAData is the cluster's trust root (the API server's self-signed
// serving certificate), for a client or proxy of the test's own.
func (c *Cluster) CAData() []byte { return append([]byte(nil), c.caData...) }

// Token is user's bearer token, for a kubeconfig of the test's own.
func (c *Cluster) Token(t testing.TB, user string) string {
	t.Helper()
	tok, ok := c.tokens[user]
	if !ok || user == markerUser {
		t.Fatalf("testcluster: unknown user %q (have %v)", user, users())
	}
	return tok
}

// RequestsAfterStop is Requests for a cluster that Stop ended: the API
// server wrote each event before answering (blocking audit mode) and is
// gone, so its whole log is read, with no marker request.
func (c *Cluster) RequestsAfterStop(t testing.TB, user string) []Request {
	t.Helper()
	fi, err := os.Stat(c.auditPath)
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	reqs, err := readAudit(c.auditPath, 0, fi.Size(), user)
	if err != nil {
		t.Fatalf("testcluster: reading the audit log: %v", err)
	}
	return reqs
}
