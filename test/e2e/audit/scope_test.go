package audit_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestMisspeltNamespaceLive: against the real API server, -n naming a
// namespace that does not exist is exit 2 with the namespaces that do,
// for a reader who may list Namespaces; a viewer who may not gets the
// report, with one warning that the namespace could not be confirmed.
func TestMisspeltNamespaceLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-n", "no-such-namespace-kubegap", "--checks", "pdb-blocks-drain")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `namespace "no-such-namespace-kubegap" does not exist`) || !strings.Contains(r.stderr, ns) {
		t.Errorf("reader: exit %d, stdout %q, stderr %q; want 2, nothing written, the namespaces (%s among them)", r.code, r.stdout, r.stderr, ns)
	}
	if ok := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-n", ns, "--checks", "pdb-blocks-drain"); ok.code == 2 {
		t.Errorf("reader, existing namespace %s: exit 2: %s", ns, ok.stderr)
	}
	v := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserNSViewer), "-n", testcluster.ViewerNamespace, "-o", "json")
	if v.code == 2 {
		t.Fatalf("viewer: exit 2: %s", v.stderr)
	}
	var rep struct{ Warnings []string }
	if err := json.Unmarshal([]byte(v.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range rep.Warnings {
		if strings.Contains(w, "could not be confirmed") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("viewer: %d warnings that the namespace could not be confirmed, want 1: %v", n, rep.Warnings)
	}
}
