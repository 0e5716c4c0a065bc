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

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// clusterInfoKinds are what kubectl cluster-info dump lists.
var clusterInfoKinds = []snapshot.Resource{snapshot.Nodes, snapshot.Events, snapshot.Services,
	snapshot.DaemonSets, snapshot.Deployments, snapshot.ReplicaSets, snapshot.Pods}

// dumpOnlyChecks are the checks that read nothing but what a cluster-info
// dump holds.
func dumpOnlyChecks() map[string]bool {
	ids := map[string]bool{}
	for _, c := range checks.All() {
		only := len(c.Reads) > 0
		for _, in := range c.Reads {
			only = only && slices.Contains(clusterInfoKinds, in.Resource)
		}
		if only && !c.Preflight {
			ids[c.ID] = true
		}
	}
	return ids
}

type dumpReport struct {
	Source struct {
		ServerVersion   string
		ClusterInfoDump *snapshot.ClusterInfoDump
	}
	Coverage []struct {
		Resource   string
		Status     string
		Complete   bool
		Namespaces []string
	}
	Checks []struct {
		ID, Status string
	}
	Findings []json.RawMessage
}

func decodeDump(t *testing.T, r result) dumpReport {
	t.Helper()
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	var rep dumpReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the report: %v\nstderr: %s", err, r.stderr)
	}
	return rep
}

// sameAsLive compares, for the checks that read only what the dump holds,
// an audit of it with the live audit: statuses and findings.
func sameAsLive(t *testing.T, what string, live, dump dumpReport) {
	t.Helper()
	only := dumpOnlyChecks()
	if len(only) < 10 {
		t.Fatalf("only %d checks read nothing but the dump's kinds", len(only))
	}
	status := func(r dumpReport) map[string]string {
		m := map[string]string{}
		for _, c := range r.Checks {
			if only[c.ID] {
				m[c.ID] = c.Status
			}
		}
		return m
	}
	if ls, ds := status(live), status(dump); !reflect.DeepEqual(ls, ds) {
		for id := range ls {
			if ls[id] != ds[id] {
				t.Errorf("%s: %s is %s live, %s from the dump", what, id, ls[id], ds[id])
			}
		}
	}
	findings := func(r dumpReport) []string {
		var out []string
		for _, raw := range r.Findings {
			var f struct{ Check string }
			json.Unmarshal(raw, &f)
			if only[f.Check] {
				out = append(out, string(raw))
			}
		}
		slices.Sort(out)
		return out
	}
	lf, df := findings(live), findings(dump)
	if len(lf) == 0 {
		t.Errorf("%s: the live audit found nothing to compare", what)
	}
	if !slices.Equal(lf, df) {
		t.Errorf("%s: findings differ: %d live, %d from the dump", what, len(lf), len(df))
		for _, f := range df {
			if !slices.Contains(lf, f) {
				t.Logf("only in the dump: %.400s", f)
			}
		}
		for _, f := range lf {
			if !slices.Contains(df, f) {
				t.Logf("only live: %.400s", f)
			}
		}
	}
}

func coverageOf(t *testing.T, rep dumpReport, r snapshot.Resource) (complete bool, namespaces []string) {
	t.Helper()
	for _, c := range rep.Coverage {
		if c.Resource == r.String() {
			return c.Complete, c.Namespaces
		}
	}
	t.Fatalf("no coverage of %s", r)
	return false, nil
}

// TestClusterInfoDumpAuditsLikeLive: what the real kubectl's cluster-info
// dump writes, as a directory and on standard output, audits with its
// kinds complete in the namespaces it dumped, and to the live audit's
// statuses and findings for the checks that read only those kinds.
func TestClusterInfoDumpAuditsLikeLive(t *testing.T) {
	c := loadDemo(t)
	tmp := t.TempDir()
	// kubectl dumps kube-system and the context's namespace unless told
	// otherwise: make that namespace one of the demo's.
	const ns = "payments"
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserAdmin))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Contexts[cfg.CurrentContext].Namespace = ns
	kc := filepath.Join(tmp, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, kc); err != nil {
		t.Fatal(err)
	}
	kubectl := func(stdout string, args ...string) {
		t.Helper()
		cmd := exec.Command(c.Kubectl(), append([]string{"--kubeconfig", kc}, args...)...)
		var out *os.File
		if stdout != "" {
			if out, err = os.Create(stdout); err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd.Stdout = out
		}
		var errOut strings.Builder
		cmd.Stderr = &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
	}
	dir := filepath.Join(tmp, "cluster-state")
	kubectl("", "cluster-info", "dump", "--output-directory", dir)
	version := filepath.Join(tmp, "version.json")
	kubectl(version, "version", "-o", "json")
	stdout := filepath.Join(tmp, "dump.json")
	kubectl(stdout, "cluster-info", "dump", "--all-namespaces")

	// kubectl wrote its files, pod logs included, although no kubelet
	// serves them here.
	for _, f := range []string{"nodes.json", "kube-system/pods.json", ns + "/pods.json", ns + "/replication-controllers.json", ns + "/events.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("kubectl cluster-info dump wrote no %s: %v", f, err)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(dir, ns, "*", "logs.txt"))
	if len(logs) == 0 {
		t.Error("kubectl cluster-info dump wrote no pod logs.txt")
	}
	if b, _ := os.ReadFile(stdout); !strings.Contains(string(b), "==== START logs for container") {
		t.Error("the standard-output dump holds no log section")
	}
	// version.json sits in the dump directory, as a user would put it.
	if b, err := os.ReadFile(version); err != nil || os.WriteFile(filepath.Join(dir, "version.json"), b, 0o644) != nil {
		t.Fatal(err)
	}

	t.Run("kubectl get dump with strays", func(t *testing.T) {
		// What a bug report's directory holds: a 3-kind dump, the same
		// pods again, kubectl's api-resources and version, and a
		// package.json. Only the objects and the version are read.
		plain := filepath.Join(tmp, "plain")
		stray := filepath.Join(tmp, "stray")
		for _, d := range []string{plain, stray} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			kubectl(filepath.Join(d, "dump.yaml"), "get", "nodes,pods,daemonsets", "-A", "-o", "yaml")
		}
		kubectl(filepath.Join(stray, "pods.json"), "get", "pods", "-A", "-o", "json")
		kubectl(filepath.Join(stray, snapshot.RecipeAPIResources), "api-resources", "-o", "name")
		kubectl(filepath.Join(stray, "version.json"), "version", "-o", "json")
		if err := os.WriteFile(filepath.Join(stray, "package.json"), []byte(`{"name": "app", "version": "1.0.0"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		without := decodeDump(t, run(t, "audit", "--from", plain, "-o", "json"))
		r := run(t, "audit", "--from", stray, "-o", "json")
		with := decodeDump(t, r)
		if with.Source.ServerVersion != "v1.37.2" {
			t.Errorf("server version %q, want v1.37.2 from version.json", with.Source.ServerVersion)
		}
		statuses := map[string]string{}
		for _, ch := range without.Checks {
			statuses[ch.ID] = ch.Status
		}
		for _, ch := range with.Checks {
			if ch.Status == "pass" {
				t.Errorf("%s passes on a kubectl get dump beside a stray %s", ch.ID, snapshot.RecipeAPIResources)
			}
			// The version only adds what needs it; nothing else changes.
			if ch.Status != statuses[ch.ID] && statuses[ch.ID] != "not-evaluated" {
				t.Errorf("%s: %s beside the strays, %s without", ch.ID, ch.Status, statuses[ch.ID])
			}
		}
		for _, cov := range with.Coverage {
			if cov.Status == "not-served" || cov.Complete {
				t.Errorf("%s: %s, complete %v, from a stray file", cov.Resource, cov.Status, cov.Complete)
			}
		}
		stderr := strings.Join(strings.Fields(r.stderr), " ")
		if !strings.Contains(stderr, filepath.Join(stray, "pods.json")+": defines") || !strings.Contains(stderr, "that "+filepath.Join(stray, "dump.yaml")+" defines too") {
			t.Errorf("no warning naming both files that define the pods:\n%s", r.stderr)
		}
		text := strings.Join(strings.Fields(run(t, "audit", "--from", stray).stdout), " ")
		for _, want := range []string{"package.json: skipped", snapshot.RecipeAPIResources + ": skipped, not in a kubegap recipe dump"} {
			if !strings.Contains(text, want) {
				t.Errorf("the report does not say %q", want)
			}
		}
	})

	t.Run("directory", func(t *testing.T) {
		rep := decodeDump(t, run(t, "audit", "--from", dir, "-o", "json"))
		if rep.Source.ServerVersion != "v1.37.2" {
			t.Errorf("server version %q, want v1.37.2 from version.json", rep.Source.ServerVersion)
		}
		if ci := rep.Source.ClusterInfoDump; ci == nil || !slices.Equal(ci.Paths, []string{dir}) {
			t.Errorf("source.clusterInfoDump = %+v", ci)
		}
		if complete, nss := coverageOf(t, rep, snapshot.Nodes); !complete || len(nss) != 0 {
			t.Errorf("nodes: complete %v in %v, want cluster-wide", complete, nss)
		}
		for _, r := range clusterInfoKinds[1:] {
			if complete, nss := coverageOf(t, rep, r); !complete || !slices.Equal(nss, []string{"kube-system", ns}) {
				t.Errorf("%s: complete %v in %v, want complete in kube-system and %s", r.Resource, complete, nss, ns)
			}
		}
		text := run(t, "audit", "--from", dir)
		if !strings.Contains(strings.Join(strings.Fields(text.stdout), " "),
			"kubectl cluster-info dump: nodes complete; events, services, daemonsets, deployments, replicasets, pods complete in namespaces kube-system, "+ns) {
			t.Errorf("the text report does not say what the dump holds:\n%.800s", text.stdout)
		}
		live := decodeDump(t, run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-n", ns, "-o", "json"))
		sameAsLive(t, "-n "+ns, live, decodeDump(t, run(t, "audit", "--from", dir, "-n", ns, "-o", "json")))
	})

	t.Run("standard output", func(t *testing.T) {
		rep := decodeDump(t, run(t, "audit", "--from", stdout, "--from", version, "-o", "json"))
		ci := rep.Source.ClusterInfoDump
		if ci == nil || !slices.Equal(ci.Paths, []string{stdout}) {
			t.Fatalf("source.clusterInfoDump = %+v", ci)
		}
		if complete, _ := coverageOf(t, rep, snapshot.Nodes); !complete {
			t.Error("nodes not complete")
		}
		// Every namespace the dump names a pod in is complete; kubectl
		// dumped all of them, but namespaces without any of these objects
		// are not named in its output.
		complete, nss := coverageOf(t, rep, snapshot.Pods)
		for _, want := range []string{ns, "observability", "telco", "default"} {
			if !complete || !slices.Contains(nss, want) {
				t.Errorf("pods: complete %v in %v, want %s among them", complete, nss, want)
			}
		}
		live := decodeDump(t, run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-n", "telco", "-o", "json"))
		sameAsLive(t, "-n telco", live, decodeDump(t, run(t, "audit", "--from", stdout, "--from", version, "-n", "telco", "-o", "json")))

		// This dump holds every namespace (--all-namespaces), which the
		// user knows and may declare: it then audits as the whole cluster
		// does live, passes included.
		all := decodeDump(t, run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-o", "json"))
		declared := decodeDump(t, run(t, "audit", "--from", stdout, "--from", version, "-o", "json",
			"--complete-kinds", "no,ev,svc,ds,deploy,rs,po"))
		passes := 0
		for _, ch := range all.Checks {
			if dumpOnlyChecks()[ch.ID] && ch.Status == "pass" {
				passes++
			}
		}
		if passes == 0 {
			t.Error("no check that reads only the dump's kinds passes live: the comparison proves little")
		}
		sameAsLive(t, "all namespaces, declared complete", all, declared)
	})
}
