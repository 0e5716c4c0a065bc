package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
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
			if c.Status == report.Pass && readsNamespaced(t, c.ID) {
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

// readsNamespaced reports whether a check reads some namespaced resource.
// Only those have inputs beyond a namespace scope: a check that reads
// cluster-scoped objects alone (APIServices, Namespaces) sees all of them
// under -n, complete, and may pass.
func readsNamespaced(t *testing.T, id string) bool {
	t.Helper()
	c, ok := checks.Lookup(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	for _, in := range c.Reads {
		if in.Resource.Namespaced {
			return true
		}
	}
	return false
}

// TestDemoFilesGiveTheDemoFindings: the demo cluster's own files, read
// with --from, prove every finding --demo reports that rests on objects
// present; a finding that rests on an absence ("no budget covers it") can
// only come from the complete demo, and then the files' audit says the
// rule behind it could not be completed. Nothing is found in the files
// that the demo does not report.
func TestDemoFilesGiveTheDemoFindings(t *testing.T) {
	_, demo, _ := auditJSON(t, "--demo")
	_, files, _ := auditJSON(t, "--from", filepath.Join("..", "demo", "cluster"))
	key := func(f finding.Finding) string {
		var objs []string
		for _, o := range f.Objects {
			objs = append(objs, o.String())
		}
		return f.Check + "|" + f.Title + "|" + strings.Join(objs, ",")
	}
	inFiles := map[string]bool{}
	for _, f := range files.Findings {
		inFiles[key(f)] = true
	}
	inDemo := map[string]bool{}
	for _, f := range demo.Findings {
		inDemo[key(f)] = true
	}
	for k := range inFiles {
		if !inDemo[k] {
			t.Errorf("the files give a finding the demo does not: %s", k)
		}
	}
	incomplete := map[string]bool{}
	for _, c := range files.Checks {
		for _, rr := range c.Rules {
			if rr.Status != report.RuleEvaluated {
				incomplete[c.ID] = true
			}
		}
	}
	missing := 0
	for _, f := range demo.Findings {
		if inFiles[key(f)] {
			continue
		}
		missing++
		if !incomplete[f.Check] {
			t.Errorf("the files lack %s although every rule of %s ran on them", key(f), f.Check)
		}
	}
	if missing > len(demo.Findings)/4 {
		t.Errorf("the files prove only %d of the demo's %d findings", len(demo.Findings)-missing, len(demo.Findings))
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
	if i, j := strings.Index(out, "\nCOVERAGE ("), strings.LastIndex(out, "0 findings:"); i < 0 || j < i {
		t.Errorf("the report does not say what could not be looked at:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "to complete: kubegap recipe > recipe.sh && sh recipe.sh && kubegap audit --from kubegap-dump") {
		t.Errorf("the report does not say how to complete the input:\n%s", out)
	}
	// The demo is a whole cluster: nothing unknown, so the flag adds nothing.
	if _, r, _ := auditJSON(t, "--demo"); r.Unknown() {
		t.Errorf("the demo has unknown checks: %+v", r.Checks)
	}
}
