package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// threeKindDump writes what `kubectl get nodes,pods,daemonsets -A -o json`
// prints for the demo cluster into dir/dump.json.
func threeKindDump(t *testing.T, dir string) string {
	t.Helper()
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var items []runtime.Object
	for i := range s.Nodes {
		items = append(items, &s.Nodes[i])
	}
	for i := range s.Pods {
		items = append(items, s.Pods[i].Object())
	}
	for i := range s.DaemonSets {
		items = append(items, &s.DaemonSets[i])
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "dump.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type dumpAuditJSON struct {
	Source struct {
		DeclaredComplete []string `json:"declaredComplete"`
	} `json:"source"`
	Checks []struct {
		ID, Status string
	} `json:"checks"`
	Warnings []string `json:"warnings"`
}

func auditStatuses(t *testing.T, args ...string) (dumpAuditJSON, map[string]string) {
	t.Helper()
	code, out, errOut := runKubegap(t, append([]string{"audit", "-o", "json"}, args...)...)
	if code == ExitError {
		t.Fatalf("exit 2: %s", errOut)
	}
	var rep dumpAuditJSON
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	st := map[string]string{}
	for _, c := range rep.Checks {
		st[c.ID] = c.Status
	}
	return rep, st
}

// TestStrayAPIResourcesPassesNothing is issue 22's false pass: a 3-kind
// dump with an api-resources.txt naming those three made nine checks pass
// (nothing unlisted exists). The stray file now changes no status.
func TestStrayAPIResourcesPassesNothing(t *testing.T) {
	plain := t.TempDir()
	threeKindDump(t, plain)
	stray := t.TempDir()
	threeKindDump(t, stray)
	if err := os.WriteFile(filepath.Join(stray, snapshot.RecipeAPIResources), []byte("nodes\npods\ndaemonsets.apps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, without := auditStatuses(t, "--from", plain)
	rep, with := auditStatuses(t, "--from", stray)
	for id, st := range with {
		if st == "pass" {
			t.Errorf("%s passes on a 3-kind dump with a stray %s", id, snapshot.RecipeAPIResources)
		}
		if without[id] != st {
			t.Errorf("%s: %s with the stray file, %s without", id, st, without[id])
		}
	}
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "not in a kubegap recipe dump") }) {
		t.Errorf("no warning about the stray file: %v", rep.Warnings)
	}
}

func TestDeclaredCompleteFlags(t *testing.T) {
	dir := t.TempDir()
	dump := threeKindDump(t, dir)
	_, before := auditStatuses(t, "--from", dump)
	rep, after := auditStatuses(t, "--from", dump, "--complete")
	if want := []string{"v1/nodes", "v1/pods", "apps/v1/daemonsets"}; !slices.Equal(rep.Source.DeclaredComplete, want) {
		t.Errorf("source.declaredComplete = %v, want %v", rep.Source.DeclaredComplete, want)
	}
	passed := 0
	for id, st := range after {
		if st == "pass" {
			passed++
			if before[id] == "pass" {
				t.Errorf("%s passed before anything was declared", id)
			}
		}
	}
	if passed == 0 {
		t.Error("declaring the three kinds complete passed no check that reads only them")
	}
	named, _ := auditStatuses(t, "--from", dump, "--complete-kinds", "no,po")
	if want := []string{"v1/nodes", "v1/pods"}; !slices.Equal(named.Source.DeclaredComplete, want) {
		t.Errorf("--complete-kinds no,po: declared %v", named.Source.DeclaredComplete)
	}
	_, text, _ := runKubegap(t, "audit", "--from", dump, "--complete-kinds", "nodes")
	if !strings.Contains(strings.Join(strings.Fields(text), " "), "declared complete by the user, not observed: nodes (all namespaces)") {
		t.Errorf("the text report does not say the completeness is declared:\n%.600s", text)
	}
	for _, bad := range [][]string{
		{"audit", "--demo", "--complete"},
		{"audit", "--from", dump, "--complete-kinds", "widgets"},
	} {
		code, out, errOut := runKubegap(t, bad...)
		if code != ExitError || out != "" || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stdout %d bytes, stderr %q; want exit 2 and one line", bad, code, len(out), errOut)
		}
	}
}
