package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/report"
)

func auditJSON(t *testing.T, args ...string) (int, report.Report, string) {
	t.Helper()
	code, out, errOut := runKubegap(t, append([]string{"audit", "-o", "json"}, args...)...)
	var r report.Report
	if code != ExitError {
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("audit %v: %v\n%s", args, err, out)
		}
	}
	return code, r, errOut
}

// TestNamespaceScopeOffline: -n means the same for --demo and --from as
// for a live read: objects of other namespaces are out, the report says
// so, and no check whose inputs reach beyond the namespace passes.
func TestNamespaceScopeOffline(t *testing.T) {
	for _, src := range [][]string{{"--demo"}, {"--from", filepath.Join("..", "demo", "cluster")}} {
		_, r, _ := auditJSON(t, append(src, "-n", "payments")...)
		if !slices.Equal(r.Source.Scope.Namespaces, []string{"payments"}) {
			t.Errorf("%v: scope %+v, want payments", src, r.Source.Scope)
		}
		for _, c := range r.Checks {
			if c.Status == report.Pass {
				t.Errorf("%v: %s passes on a namespace-scoped audit", src, c.ID)
			}
		}
		for _, f := range r.Findings {
			// A finding is about an object in scope (or cluster-scoped); it
			// may still name what that object refers to elsewhere.
			if o := f.Objects[0]; o.Namespace != "" && o.Namespace != "payments" {
				t.Errorf("%v: finding %q is about %s, outside the scope", src, f.Title, o)
			}
		}
		code, out, _ := runKubegap(t, append([]string{"audit"}, append(src, "-n", "payments")...)...)
		if code == ExitError || !strings.Contains(strings.SplitN(out, "\n", 2)[0], "namespace payments") {
			t.Errorf("%v: text report does not state the scope (exit %d):\n%s", src, code, out)
		}
	}
}

// TestDemoFilesGiveTheDemoFindings: the demo cluster's own files, read
// with --from, prove every finding --demo reports.
func TestDemoFilesGiveTheDemoFindings(t *testing.T) {
	_, demo, _ := auditJSON(t, "--demo")
	_, files, _ := auditJSON(t, "--from", filepath.Join("..", "demo", "cluster"))
	key := func(r report.Report) []string {
		var out []string
		for _, f := range r.Findings {
			var objs []string
			for _, o := range f.Objects {
				objs = append(objs, o.String())
			}
			out = append(out, f.Check+"|"+f.Title+"|"+strings.Join(objs, ","))
		}
		slices.Sort(out)
		return out
	}
	if d, f := key(demo), key(files); !slices.Equal(d, f) {
		t.Errorf("--from the demo files gives other findings than --demo:\ndemo:  %q\nfiles: %q", d, f)
	}
}

// TestFailOnUnknown: CI can refuse "could not look".
func TestFailOnUnknown(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "ns.yaml")
	if err := os.WriteFile(f, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runKubegap(t, "audit", "--from", f); code != ExitOK {
		t.Errorf("without --fail-on-unknown: exit %d, want 0", code)
	}
	code, out, errOut := runKubegap(t, "audit", "--from", f, "--fail-on-unknown")
	if code != ExitFindings || !strings.Contains(errOut, "--fail-on-unknown") {
		t.Errorf("with --fail-on-unknown: exit %d, stderr %q, want 1 and a reason", code, errOut)
	}
	if i, j := strings.Index(out, "COULD NOT LOOK"), strings.LastIndex(out, "0 findings:"); i < 0 || j < i {
		t.Errorf("the report does not lead with what could not be looked at:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "'kubegap recipe' prints the commands") {
		t.Errorf("the report does not say how to complete the input:\n%s", out)
	}
	// The demo is a whole cluster: nothing unknown, so the flag adds nothing.
	if _, r, _ := auditJSON(t, "--demo"); r.Unknown() {
		t.Errorf("the demo has unknown checks: %+v", r.Checks)
	}
}
