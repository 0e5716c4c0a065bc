// Package incluster_test runs kubegap the way deploy/cronjob.yaml does:
// with the CronJob's audit container's own arguments, as its ServiceAccount
// (a token from the TokenRequest API), against a real kube-apiserver with
// its audit log on. test/e2e/reports runs the publish container.
package incluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

// manifest reads deploy/cronjob.yaml's audit objects by kind: the
// Namespace, the read-only ServiceAccount kubegap, its ClusterRole and
// binding, and the CronJob. (The publisher's objects are
// test/e2e/reports' to test.)
func manifest(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range testcluster.ReadYAML(t, "../../../deploy/cronjob.yaml") {
		if o.GetKind() == "Namespace" || o.GetKind() == "CronJob" || o.GetName() == "kubegap" || o.GetName() == "kubegap-reader" {
			out[o.GetKind()] = o
		}
	}
	for _, k := range []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "CronJob"} {
		if out[k] == nil {
			t.Fatalf("deploy/cronjob.yaml has no %s", k)
		}
	}
	return out
}

func TestCronJobServiceAccountAuditsReadOnly(t *testing.T) {
	c := testcluster.Get(t)
	m := manifest(t)
	admin := c.Client(t, testcluster.UserAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// The file's ClusterRole is deploy/rbac.yaml's, which the test bed
	// already serves as kubegap-reader: the same rules, not a wider copy.
	var fileRole rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m["ClusterRole"].Object, &fileRole); err != nil {
		t.Fatal(err)
	}
	served, err := admin.RbacV1().ClusterRoles().Get(ctx, fileRole.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served.Rules, fileRole.Rules) {
		t.Fatalf("cronjob.yaml's ClusterRole differs from deploy/rbac.yaml's:\n%v\n%v", fileRole.Rules, served.Rules)
	}

	// Everything else of the file, in a namespace of the test's own.
	ns := c.Namespace(t)
	sa, binding, cron := m["ServiceAccount"], m["ClusterRoleBinding"], m["CronJob"]
	sa.SetNamespace(ns)
	cron.SetNamespace(ns)
	binding.SetName("kubegap-reader-" + ns)
	subjects, _, _ := unstructured.NestedSlice(binding.Object, "subjects")
	subjects[0].(map[string]any)["namespace"] = ns
	unstructured.SetNestedSlice(binding.Object, subjects, "subjects")
	c.Apply(t, sa, binding, cron)
	c.LoadYAMLInto(t, ns, "../audit/testdata/clean.yaml")

	// The ServiceAccount's token, as the kubelet would mount it.
	tok, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.GetName(),
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(600))}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest: %v", err)
	}
	kc, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserReader))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		a.Token = tok.Status.Token
	}
	kcPath := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}

	// The CronJob's own arguments.
	var job batchv1.CronJob
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cron.Object, &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != sa.GetName() {
		t.Fatalf("the CronJob runs as %q, not the file's ServiceAccount", pod.ServiceAccountName)
	}
	// The audit container's arguments, its report file in a directory of
	// the test's own instead of the pod's emptyDir.
	reportDir := t.TempDir()
	var args []string
	for _, a := range pod.InitContainers[0].Args {
		if rest, ok := strings.CutPrefix(a, "/report/"); ok {
			a = filepath.Join(reportDir, rest)
		}
		args = append(args, a)
	}
	args = append(args, "--kubeconfig", kcPath)
	mark := c.Mark(t)
	cmd := exec.Command(testcluster.Kubegap(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubegap %v: %v\n%s", args, err, stderr.String())
	}
	var rep struct {
		Kind     string
		Coverage []struct{ Resource, Status string }
		Checks   []struct{ ID, Status string }
	}
	written, err := os.ReadFile(filepath.Join(reportDir, "report.json"))
	if err != nil {
		t.Fatalf("the audit wrote no report file: %v", err)
	}
	if err := json.Unmarshal(written, &rep); err != nil || rep.Kind != "AuditReport" {
		t.Fatalf("the report file holds no JSON report: %v\n%.200s", err, written)
	}
	for _, cov := range rep.Coverage {
		if cov.Status == "forbidden" {
			t.Errorf("the ServiceAccount may not read %s", cov.Resource)
		}
	}
	user := "system:serviceaccount:" + ns + ":" + sa.GetName()
	reqs := c.RequestsSince(t, mark, user)
	if len(reqs) == 0 {
		t.Fatalf("the audit log shows no request by %s", user)
	}
	for _, r := range reqs {
		if r.Verb != "get" && r.Verb != "list" && r.Verb != "watch" {
			t.Errorf("%s sent %s %s", user, r.Verb, r.RequestURI)
		}
	}
	t.Logf("%d requests by %s, all get/list/watch", len(reqs), user)

	// snapshot -o - writes the same read to standard output.
	snap := exec.Command(testcluster.Kubegap(t), "snapshot", "-o", "-", "--kubeconfig", kcPath)
	snap.Env = cmd.Env
	out, err := snap.Output()
	var head struct{ APIVersion, Kind string }
	if err != nil || json.Unmarshal(out, &head) != nil || head.Kind != "Snapshot" {
		t.Errorf("snapshot -o -: %v, %.100s", err, out)
	}
}

func ptr[T any](v T) *T { return &v }

// TestCIDocPreUpgradeGate runs docs/ci.md's live-cluster commands as
// written, through a shell, with kubegap on PATH and a kubeconfig whose
// context is named prod (the read-only user): the baseline passes, the gate
// passes on the same cluster, and fails once a new high gap appears.
func TestCIDocPreUpgradeGate(t *testing.T) {
	c := testcluster.Get(t)
	doc, err := os.ReadFile("../../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, line := range strings.Split(string(doc), "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "kubegap audit --context prod") {
			cmds = append(cmds, l)
		}
	}
	if len(cmds) != 2 {
		t.Fatalf("docs/ci.md has %d gate commands, want the baseline and the gate: %q", len(cmds), cmds)
	}
	kc, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserReader))
	if err != nil {
		t.Fatal(err)
	}
	for name, ctx := range kc.Contexts {
		delete(kc.Contexts, name)
		kc.Contexts["prod"] = ctx
	}
	kc.CurrentContext = "prod"
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kcPath); err != nil {
		t.Fatal(err)
	}
	run := func(cmd string) (int, string) {
		sh := exec.Command("sh", "-c", cmd)
		sh.Dir = dir
		sh.Env = append(os.Environ(), "KUBECONFIG="+kcPath, "PATH="+filepath.Dir(testcluster.Kubegap(t))+":"+os.Getenv("PATH"),
			"XDG_CONFIG_HOME="+dir)
		out, err := sh.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return 0, string(out)
	}
	ns := c.Namespace(t)
	c.LoadYAMLInto(t, ns, "../audit/testdata/clean.yaml")
	if code, out := run(cmds[0]); code != 0 {
		t.Fatalf("%s: exit %d\n%s", cmds[0], code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "baseline.json")); err != nil {
		t.Fatalf("no baseline written: %v", err)
	}
	if code, out := run(cmds[1]); code != 0 {
		t.Fatalf("the gate failed on an unchanged cluster: exit %d\n%s", code, out)
	}
	// A webhook that fails closed on every pod creation: a new high gap.
	c.LoadYAML(t, "../../../internal/cli/testdata/manifests/webhook.yaml")
	code, out := run(cmds[1])
	if code != 1 || !strings.Contains(out, "webhook-blast-radius") || !strings.Contains(out, "1 new") {
		t.Errorf("the gate after a new gap: exit %d\n%s", code, out)
	}
}

// TestCompletionListsNamespaces: -n completes from the cluster (a read-only
// LIST, as the reader user) and --context from the kubeconfig.
func TestCompletionListsNamespaces(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	out, err := exec.Command(testcluster.Kubegap(t), "__complete", "audit", "--kubeconfig", kc, "-n", "").Output()
	if err != nil || !strings.Contains(string(out), "\n"+ns+"\n") || !strings.Contains(string(out), "kube-system") {
		t.Errorf("namespace completion: %v\n%s", err, out)
	}
	out, err = exec.Command(testcluster.Kubegap(t), "__complete", "audit", "--kubeconfig", kc, "--context", "").Output()
	if err != nil || !strings.Contains(string(out), "testbed-reader") {
		t.Errorf("context completion: %v\n%s", err, out)
	}
}
