package audit_test

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestProgressAgainstTheTestBed: against the real kube-apiserver, stderr
// that is not a terminal (this pipe) gets progress only when asked: with
// --progress it opens with the server contacted, then discovery, before
// anything about the lists; without, it says nothing of it.
func TestProgressAgainstTheTestBed(t *testing.T) {
	c := testcluster.Get(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	r := run(t, "audit", "--kubeconfig", kc, "--progress", "-o", "json", "--fail-on", "none")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "kubegap: contacting https://") || lines[1] != "kubegap: discovering APIs" {
		t.Errorf("--progress: stderr does not open with the server and discovery:\n%s", r.stderr)
	}
	r = run(t, "audit", "--kubeconfig", kc, "-o", "json", "--fail-on", "none")
	if strings.Contains(r.stderr, "contacting") || strings.Contains(r.stderr, "discovering") {
		t.Errorf("progress in a pipe that did not ask:\n%s", r.stderr)
	}
}
