// Package audit_test runs the kubegap binary against a real kube-apiserver:
// a whole audit as the read-only user finds the gaps loaded into the
// cluster, sends nothing but get/list/watch, and a snapshot of the cluster
// audits offline to the same findings.
package audit_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

const demoDir = "../../../internal/demo/cluster/"

// loadDemo loads the demo cluster's objects into the test bed for one test.
// Objects the demo puts in kube-system and default go to namespaces of the
// test's own, which the test bed removes with everything in them when the
// test ends. The image-policy webhook, which fails closed on every pod
// CREATE, goes in last: after it no pod can be created, exactly the gap it
// stands for.
func loadDemo(t *testing.T) *testcluster.Cluster {
	c := testcluster.Get(t)
	c.LoadYAML(t, "testdata/nad-crd.yaml")
	moved := map[string]string{"kube-system": c.Namespace(t), "default": c.Namespace(t)}
	var files []string
	for _, f := range []string{"nodes.yaml", "azure-cni.yaml", "payments.yaml", "observability.yaml", "telco.yaml", "legacy.yaml", "webhook.yaml"} {
		files = append(files, demoDir+f)
	}
	var objs []runtime.Object
	for _, o := range testcluster.ReadYAML(t, files...) {
		if ns, ok := moved[o.GetNamespace()]; ok {
			o.SetNamespace(ns)
			if o.GetKind() == "Event" {
				unstructured.SetNestedField(o.Object, ns, "involvedObject", "namespace")
			}
		}
		objs = append(objs, o)
	}
	c.Apply(t, objs...)
	return c
}

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	code, out, errOut := testcluster.Run(t, args...)
	return result{code, out, errOut}
}

type report struct {
	Source struct {
		Type, ServerVersion string
		Scope               struct{ Namespaces []string }
	}
	Coverage []struct {
		Resource, Status, Message string
		Count                     int
	}
	Checks []struct {
		ID, Status, Reason string
	}
	Findings []json.RawMessage
}

func decode(t *testing.T, r result) (report, map[string]bool) {
	t.Helper()
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the report: %v\nstderr: %s", err, r.stderr)
	}
	fired := map[string]bool{}
	for _, raw := range rep.Findings {
		var f struct{ Check string }
		json.Unmarshal(raw, &f)
		fired[f.Check] = true
	}
	return rep, fired
}

func TestAuditAsReaderFindsGapsAndOnlyReads(t *testing.T) {
	c := loadDemo(t)
	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-o", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (high findings)\nstderr: %s", r.code, r.stderr)
	}
	rep, fired := decode(t, r)
	if rep.Source.Type != "cluster" || rep.Source.ServerVersion != "v1.37.2" {
		t.Errorf("source = %+v", rep.Source)
	}
	for _, id := range []string{"host-binary-glibc", "pdb-blocks-drain", "image-pull-always", "webhook-blast-radius", "pod-sandbox-failures", "containerd-chained-cni"} {
		if !fired[id] {
			t.Errorf("check %s found nothing on the loaded gaps", id)
		}
	}
	for _, cov := range rep.Coverage {
		// not-served: an add-on's CRD (Karpenter NodePools) is not installed.
		if cov.Status != "read" && cov.Status != "not-served" {
			t.Errorf("the read-only user could not read %s: %s %s", cov.Resource, cov.Status, cov.Message)
		}
	}
	if !strings.Contains(r.stdout, `"name": "azure-cns"`) || !strings.Contains(r.stdout, `"name": "aks-fips2004-10000001"`) {
		t.Error("the findings do not name the DaemonSet and the 20.04 nodes")
	}

	// Only reads of the catalogue (ConfigMaps one by one, only those
	// kubegap names; no Secret, no subresource), from the audit log.
	if testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{}) == 0 {
		t.Fatal("the audit log holds no request from the reader")
	}
}

func TestAuditAsNamespaceViewerIsNotEvaluatedNotPassed(t *testing.T) {
	c := loadDemo(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserNSViewer), "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)
	forbidden := map[string]bool{}
	for _, cov := range rep.Coverage {
		if cov.Status == "forbidden" {
			forbidden[cov.Resource] = true
		}
	}
	for _, res := range []string{"v1/nodes", "v1/pods", "apps/v1/daemonsets"} {
		if !forbidden[res] {
			t.Errorf("coverage does not list %s as forbidden", res)
		}
	}
	for _, ch := range rep.Checks {
		if ch.Status == "pass" && !allNotServed(t, ch.ID, rep) {
			t.Errorf("check %s passed without its inputs", ch.ID)
		}
		if (ch.Status == "not-evaluated" || ch.Status == "partial") && !strings.Contains(ch.Reason, "forbidden") {
			t.Errorf("check %s %s for %q, want the forbidden resource named", ch.ID, ch.Status, ch.Reason)
		}
	}
}

// allNotServed reports whether every resource a check reads is one the
// API server does not serve (an add-on's CRD that is not installed): then
// its objects are known to be absent whoever asks, and a pass is earned.
func allNotServed(t *testing.T, id string, rep report) bool {
	t.Helper()
	c, ok := checks.Lookup(id)
	if !ok {
		t.Fatalf("the report names check %s, which is not registered", id)
	}
	status := map[string]string{}
	for _, cov := range rep.Coverage {
		status[cov.Resource] = cov.Status
	}
	for _, in := range c.Reads {
		if status[in.Resource.String()] != string(snapshot.StatusNotServed) {
			return false
		}
	}
	return len(c.Reads) > 0
}

func TestSnapshotAuditsToTheSameFindings(t *testing.T) {
	c := loadDemo(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	live := run(t, "audit", "--kubeconfig", kc, "-o", "json")
	snap := filepath.Join(t.TempDir(), "cluster.json.gz")
	mark := c.Mark(t)
	if r := run(t, "snapshot", "--kubeconfig", kc, "-o", snap, "-q"); r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	if testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{}) == 0 {
		t.Error("the snapshot sent no request")
	}
	raw, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Error("a .gz snapshot is not gzipped")
	}
	offline := run(t, "audit", "--from", snap, "-o", "json")
	if offline.code != live.code {
		t.Errorf("exit %d offline, %d live", offline.code, live.code)
	}
	lr, _ := decode(t, live)
	or, _ := decode(t, offline)
	if or.Source.Type != "snapshot" || or.Source.ServerVersion != lr.Source.ServerVersion {
		t.Errorf("offline source = %+v", or.Source)
	}
	if !reflect.DeepEqual(lr.Findings, or.Findings) {
		t.Errorf("offline findings differ from live: %d live, %d offline", len(lr.Findings), len(or.Findings))
	}
	if bytes.Contains(raw, []byte("do-not-print-me")) {
		t.Error("the snapshot holds an environment variable value")
	}
}

// TestCleanNamespaceIsSilent: the workload checks stay quiet on a namespace
// without their gaps, read from the same real cluster. A namespace is not
// the cluster: silence there is partial, never pass.
func TestCleanNamespaceIsSilent(t *testing.T) {
	c := testcluster.Get(t)
	c.LoadYAML(t, demoDir+"nodes.yaml")
	ns := c.Namespace(t)
	c.LoadYAMLInto(t, ns, "testdata/clean.yaml")
	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "-n", ns,
		"--checks", "host-binary-glibc,image-pull-always,pdb-blocks-drain,pod-sandbox-failures", "-o", "json")
	if r.code != 0 {
		t.Fatalf("exit %d, want 0\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{Namespace: ns}) == 0 {
		t.Error("the audit sent no request")
	}
	rep, fired := decode(t, r)
	if len(fired) != 0 {
		t.Errorf("checks fired on a clean namespace: %v\n%s", fired, r.stdout)
	}
	for _, ch := range rep.Checks {
		if ch.Status != "partial" || !strings.Contains(ch.Reason, "read only in namespace "+ns) {
			t.Errorf("check %s is %s (%s), want partial for the namespace scope", ch.ID, ch.Status, ch.Reason)
		}
	}
}

// TestExecCredentialPlugin: a kubeconfig whose user gets its token from an
// exec plugin, as EKS, GKE and AKS kubeconfigs do, works as it does in kubectl.
func TestExecCredentialPlugin(t *testing.T) {
	c := loadDemo(t)
	cfg, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserReader))
	if err != nil {
		t.Fatal(err)
	}
	for _, ai := range cfg.AuthInfos {
		token := ai.Token
		ai.Token = ""
		ai.Exec = &clientcmdapi.ExecConfig{
			APIVersion:      "client.authentication.k8s.io/v1",
			Command:         "/bin/sh",
			Args:            []string{"-c", `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$TOKEN"`},
			Env:             []clientcmdapi.ExecEnvVar{{Name: "TOKEN", Value: token}},
			InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
		}
	}
	path := filepath.Join(t.TempDir(), "exec.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	r := run(t, "audit", "--kubeconfig", path, "--checks", "host-binary-glibc", "-o", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstderr: %s", r.code, r.stderr)
	}
	if _, fired := decode(t, r); !fired["host-binary-glibc"] {
		t.Error("no finding through the exec-plugin kubeconfig")
	}
}
