package audit_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestNamespaceViewerScopedAudit: an audit limited to the one namespace the
// viewer may read states that scope, and no check passes whose inputs lie
// outside it.
func TestNamespaceViewerScopedAudit(t *testing.T) {
	c := loadDemo(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserNSViewer),
		"-n", testcluster.ViewerNamespace, "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)
	if !slices.Equal(rep.Source.Scope.Namespaces, []string{testcluster.ViewerNamespace}) {
		t.Errorf("source scope = %+v, want %s", rep.Source.Scope, testcluster.ViewerNamespace)
	}
	for _, ch := range rep.Checks {
		if ch.Status == "pass" && passesOnlyNotServed[ch.ID] == "" {
			t.Errorf("check %s passed on a namespace-scoped read", ch.ID)
		}
	}
	text := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserNSViewer), "-n", testcluster.ViewerNamespace)
	if head := strings.Join(strings.Fields(strings.Join(strings.SplitN(text.stdout, "\n", 4)[:3], " ")), " "); !strings.Contains(head, "namespace "+testcluster.ViewerNamespace) {
		t.Errorf("the text report does not state the scope:\n%s", text.stdout)
	}
}

// passesOnlyNotServed are the checks whose every input is a resource the
// test bed does not serve: discovery, which the viewer may read, proves
// there is none in any scope, so such a check passes whatever the scope.
var passesOnlyNotServed = map[string]string{
	"openshift-cgroup-v1": "reads only config.openshift.io/v1 nodes, which only OpenShift and OKD serve",
}

// TestRecipeDumpAuditsLikeLive: the dump 'kubegap recipe' makes with the
// real kubectl audits to the live audit's statuses and findings.
func TestRecipeDumpAuditsLikeLive(t *testing.T) {
	c := loadDemo(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	live := run(t, "audit", "--kubeconfig", kc, "-o", "json")
	recipe := run(t, "recipe")
	if recipe.code != 0 {
		t.Fatalf("recipe: exit %d: %s", recipe.code, recipe.stderr)
	}
	dir := filepath.Join(t.TempDir(), "dump")
	sh := exec.Command("sh", "-c", recipe.stdout)
	sh.Env = append(os.Environ(), "KUBECTL="+c.Kubectl()+" --kubeconfig "+kc, "DIR="+dir)
	mark := c.Mark(t)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("running the recipe: %v\n%s", err, out)
	}
	// The recipe's kubectl reads what kubegap would, and kubectl
	// api-resources every discovery document.
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{AnyDiscovery: true})
	offline := run(t, "audit", "--from", dir, "-o", "json")
	if offline.code != live.code {
		t.Errorf("exit %d from the dump, %d live\n%s", offline.code, live.code, offline.stderr)
	}
	lr, _ := decode(t, live)
	or, _ := decode(t, offline)
	if or.Source.ServerVersion != lr.Source.ServerVersion {
		t.Errorf("server version %q from the dump, %q live", or.Source.ServerVersion, lr.Source.ServerVersion)
	}
	status := func(r report) map[string]string {
		m := map[string]string{}
		for _, ch := range r.Checks {
			m[ch.ID] = ch.Status
		}
		return m
	}
	if ls, os := status(lr), status(or); !reflect.DeepEqual(ls, os) {
		t.Errorf("statuses differ:\nlive: %v\ndump: %v", ls, os)
	}
	// A finding read from files says where its objects were defined
	// (locations, and file and line on each object reference); a live
	// read has no files. Everything else must match.
	canon := func(raw []json.RawMessage) []string {
		var out []string
		for _, f := range raw {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(f, &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "locations")
			var objs []map[string]json.RawMessage
			if err := json.Unmarshal(m["objects"], &objs); err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				delete(o, "file")
				delete(o, "line")
			}
			stripped, err := json.Marshal(objs)
			if err != nil {
				t.Fatal(err)
			}
			m["objects"] = stripped
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		slices.Sort(out)
		return out
	}
	if lf, of := canon(lr.Findings), canon(or.Findings); !slices.Equal(lf, of) {
		t.Errorf("findings differ: %d live, %d from the dump", len(lf), len(of))
		for _, f := range of {
			if !slices.Contains(lf, f) {
				t.Logf("only in the dump: %s", f)
			}
		}
		for _, f := range lf {
			if !slices.Contains(of, f) {
				t.Logf("only live: %s", f)
			}
		}
	}
	for _, cov := range or.Coverage {
		if cov.Status == "not-in-input" {
			t.Errorf("the dump lacks %s", cov.Resource)
		}
	}
}
