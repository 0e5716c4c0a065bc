// Package reports_test checks kubegap's in-cluster report objects against
// the real thing: the upstream PolicyReport and OpenReports CRDs (pinned
// in test/e2e/testdata/crds) installed into a real kube-apiserver, whose
// schema validation judges -o policyreport and -o openreports; and kubegap
// publish run as deploy/cronjob.yaml runs it, as its own ServiceAccount
// with the file's RBAC, with the API server's audit log showing what each
// identity sent.
package reports_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

const crdDir = "../testdata/crds"

var (
	policyReports        = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "policyreports"}
	clusterPolicyReports = schema.GroupVersionResource{Group: "wgpolicyk8s.io", Version: "v1alpha2", Resource: "clusterpolicyreports"}
	openReports          = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
	openClusterReports   = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "clusterreports"}
)

// installCRDs installs the four pinned upstream CRDs (once per package:
// CRDs stay) and waits until they are established.
func installCRDs(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(crdDir, "*.yaml"))
	if err != nil || len(files) != 4 {
		t.Fatalf("pinned CRDs: %v %v", files, err)
	}
	c.LoadYAML(t, files...)
}

// kubegap runs the binary and returns its stdout, stderr and exit code.
func kubegap(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testcluster.Kubegap(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("kubegap %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), 0
}

// namespacesOf lists the namespaces the report objects of a YAML stream
// are in.
func namespacesOf(t *testing.T, stream string) []string {
	t.Helper()
	var out []string
	for _, doc := range strings.Split(stream, "\n---\n") {
		var m struct{ Metadata struct{ Namespace string } }
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if ns := m.Metadata.Namespace; ns != "" && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	return out
}

// dryRunApply server-side applies a YAML stream with real kubectl as the
// admin, as a server dry run: the API server validates every object
// against the CRD's schema and stores nothing.
func dryRunApply(t *testing.T, c *testcluster.Cluster, stream string) (string, error) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "reports.yaml")
	if err := os.WriteFile(f, []byte(stream), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(c.Kubectl(), "--kubeconfig", c.Kubeconfig(t, testcluster.UserAdmin),
		"apply", "--server-side", "--field-manager=kubegap", "--dry-run=server", "-f", f).CombinedOutput()
	return string(out), err
}

// TestOutputsValidateAgainstUpstreamCRDs: -o policyreport and -o
// openreports of the demo and of a managed-cluster fixture server-side
// apply (dry run) against the upstream CRDs; a result the schema does not
// allow is refused, so the check can fail.
func TestOutputsValidateAgainstUpstreamCRDs(t *testing.T) {
	c := testcluster.Get(t)
	installCRDs(t, c)
	inputs := map[string][]string{
		"demo": {"--demo"},
		"aks":  {"--from", "../../../internal/checks/testdata/managed/aks"},
	}
	for name, in := range inputs {
		for _, format := range []string{"policyreport", "openreports"} {
			t.Run(name+"/"+format, func(t *testing.T) {
				args := append([]string{"audit", "-o", format, "-q", "--fail-on", "none"}, in...)
				out, stderr, code := kubegap(t, args...)
				if code != 0 {
					t.Fatalf("kubegap %v: exit %d\n%s", args, code, stderr)
				}
				docs := strings.Count(out, "\n---\n") + 1
				if !strings.Contains(out, "\nkind: Cluster") {
					t.Fatalf("no cluster report in the output:\n%s", out)
				}
				if name == "demo" && docs < 2 {
					t.Fatalf("%d report objects: the demo has findings in namespaces\n%s", docs, out)
				}
				// Namespaced reports need their namespace to exist.
				var nsObjs []runtime.Object
				for _, ns := range namespacesOf(t, out) {
					if _, err := c.Client(t, testcluster.UserAdmin).CoreV1().Namespaces().Get(context.Background(), ns, metav1.GetOptions{}); apierrors.IsNotFound(err) {
						u := &unstructured.Unstructured{}
						u.SetAPIVersion("v1")
						u.SetKind("Namespace")
						u.SetName(ns)
						nsObjs = append(nsObjs, u)
					}
				}
				if len(nsObjs) > 0 {
					c.Apply(t, nsObjs...)
				}
				applied, err := dryRunApply(t, c, out)
				if err != nil {
					t.Fatalf("the API server refused the %s output of %s: %v\n%s", format, name, err, applied)
				}
				if n := strings.Count(applied, "serverside-applied (server dry run)"); n != docs {
					t.Errorf("%d of %d objects applied:\n%s", n, docs, applied)
				}
				// Nothing was stored.
				gvr := policyReports
				if format == "openreports" {
					gvr = openReports
				}
				list, err := c.Dynamic(t, testcluster.UserAdmin).Resource(gvr).List(context.Background(), metav1.ListOptions{})
				if err != nil || len(list.Items) != 0 {
					t.Errorf("a dry run stored %v objects (%v)", len(list.Items), err)
				}

				// The control: a result value the schema does not list.
				bad := strings.Replace(out, "result: pass", "result: passed", 1)
				if bad == out {
					t.Fatal("no pass result to break")
				}
				if applied, err := dryRunApply(t, c, bad); err == nil || !strings.Contains(applied, "passed") {
					t.Errorf("the API server accepted result: passed (%v)\n%s", err, applied)
				}
			})
		}
	}
}

// cronjob reads deploy/cronjob.yaml by kind/name.
func cronjob(t *testing.T) map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]*unstructured.Unstructured{}
	for _, o := range testcluster.ReadYAML(t, "../../../deploy/cronjob.yaml") {
		out[o.GetKind()+"/"+o.GetName()] = o
	}
	for _, k := range []string{"ServiceAccount/kubegap", "ServiceAccount/kubegap-publisher", "Secret/kubegap-publisher-token",
		"ClusterRole/kubegap-reader", "ClusterRole/kubegap-publisher", "ClusterRoleBinding/kubegap-reader",
		"ClusterRoleBinding/kubegap-publisher", "CronJob/kubegap"} {
		if out[k] == nil {
			t.Fatalf("deploy/cronjob.yaml has no %s", k)
		}
	}
	return out
}

// saKubeconfig is a kubeconfig for the test bed that authenticates with a
// TokenRequest token of ServiceAccount ns/name. The test bed runs no
// controller manager, so a kubernetes.io/service-account-token Secret is
// never filled in; a TokenRequest token authenticates as the same
// ServiceAccount, which is what RBAC and the audit log judge.
func saKubeconfig(t *testing.T, c *testcluster.Cluster, ns, name string) string {
	t.Helper()
	tok, err := c.Client(t, testcluster.UserAdmin).CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(900))}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, name, err)
	}
	kc, err := clientcmd.LoadFromFile(c.Kubeconfig(t, testcluster.UserNobody))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range kc.AuthInfos {
		a.Token = tok.Status.Token
	}
	p := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := clientcmd.WriteToFile(*kc, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func ptr[T any](v T) *T { return &v }

// withFile replaces the value of a path argument under /report/ by the
// same file in dir.
func withFile(args []string, dir string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if rest, ok := strings.CutPrefix(a, "/report/"); ok {
			out[i] = filepath.Join(dir, rest)
		}
	}
	return out
}

// TestCronJobAuditsThenPublishes runs deploy/cronjob.yaml's two containers
// with their own arguments, each as its own ServiceAccount bound by the
// file's RBAC: the audit writes the JSON report, publish writes it as
// PolicyReports. A second run, after a namespace's gap is fixed, deletes
// that namespace's report. The audit log shows the audit's identity only
// reading and the publisher's only touching report objects.
func TestCronJobAuditsThenPublishes(t *testing.T) {
	c := testcluster.Get(t)
	installCRDs(t, c)
	m := cronjob(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin := c.Client(t, testcluster.UserAdmin)
	dyn := c.Dynamic(t, testcluster.UserAdmin)

	// The file's reader role is deploy/rbac.yaml's, which the test bed
	// already serves as kubegap-reader: compare, do not re-create.
	var fileRole rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m["ClusterRole/kubegap-reader"].Object, &fileRole); err != nil {
		t.Fatal(err)
	}
	served, err := admin.RbacV1().ClusterRoles().Get(ctx, fileRole.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(served.Rules, fileRole.Rules) {
		t.Fatalf("cronjob.yaml's reader ClusterRole differs from deploy/rbac.yaml's")
	}

	// The ServiceAccounts, the publisher's ClusterRole and both bindings,
	// in a namespace of the test's own.
	ns := c.Namespace(t)
	var objs []runtime.Object
	for _, k := range []string{"ServiceAccount/kubegap", "ServiceAccount/kubegap-publisher", "Secret/kubegap-publisher-token"} {
		m[k].SetNamespace(ns)
		objs = append(objs, m[k])
	}
	objs = append(objs, m["ClusterRole/kubegap-publisher"])
	for _, k := range []string{"ClusterRoleBinding/kubegap-reader", "ClusterRoleBinding/kubegap-publisher"} {
		b := m[k]
		b.SetName(b.GetName() + "-" + ns)
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		subjects[0].(map[string]any)["namespace"] = ns
		if err := unstructured.SetNestedSlice(b.Object, subjects, "subjects"); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, b)
	}
	c.Apply(t, objs...)
	auditKC := saKubeconfig(t, c, ns, "kubegap")
	publishKC := saKubeconfig(t, c, ns, "kubegap-publisher")

	var job batchv1.CronJob
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m["CronJob/kubegap"].Object, &job); err != nil {
		t.Fatal(err)
	}
	pod := job.Spec.JobTemplate.Spec.Template.Spec
	if pod.ServiceAccountName != "kubegap" || len(pod.InitContainers) != 1 || len(pod.Containers) != 1 {
		t.Fatalf("the CronJob: ServiceAccount %q, %d init containers, %d containers", pod.ServiceAccountName, len(pod.InitContainers), len(pod.Containers))
	}
	auditArgs, publishArgs := pod.InitContainers[0].Args, pod.Containers[0].Args
	if auditArgs[0] != "audit" || publishArgs[0] != "publish" {
		t.Fatalf("the CronJob runs %v then %v", auditArgs, publishArgs)
	}

	// Gaps in three namespaces: budgets that allow no eviction.
	c.LoadYAML(t, "../../../internal/checks/availability/testdata/pdb-blocks-drain/gap.yaml")
	gapNamespaces := []string{"azure-workload-identity-system", "istio-system", "knative-serving"}

	dir := t.TempDir()
	run := func() string {
		t.Helper()
		if _, stderr, code := kubegap(t, append(withFile(auditArgs, dir), "--kubeconfig", auditKC)...); code != 0 {
			t.Fatalf("audit: exit %d\n%s", code, stderr)
		}
		out, stderr, code := kubegap(t, append(withFile(publishArgs, dir), "--kubeconfig", publishKC)...)
		if code != 0 {
			t.Fatalf("publish: exit %d\n%s%s", code, out, stderr)
		}
		return out
	}
	mark := c.Mark(t)
	out := run()
	t.Logf("first publish:\n%s", out)
	for _, gns := range gapNamespaces {
		r, err := dyn.Resource(policyReports).Namespace(gns).Get(ctx, "kubegap", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("no PolicyReport kubegap in %s: %v", gns, err)
		}
		if r.GetLabels()["app.kubernetes.io/managed-by"] != "kubegap" {
			t.Errorf("%s/kubegap labels %v", gns, r.GetLabels())
		}
		if !hasResult(r, "pdb-blocks-drain", "fail") {
			t.Errorf("%s/kubegap holds no failed pdb-blocks-drain result", gns)
		}
	}
	cluster, err := dyn.Resource(clusterPolicyReports).Get(ctx, "kubegap", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("no ClusterPolicyReport kubegap: %v", err)
	}
	if pass, _, _ := unstructured.NestedInt64(cluster.Object, "summary", "pass"); pass == 0 {
		t.Error("the cluster report counts no passed rule")
	}

	// -o policyreport of a live audit names each object with the UID the
	// API server gave it.
	pdb, err := admin.PolicyV1().PodDisruptionBudgets("knative-serving").Get(ctx, "activator-pdb", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live, stderr, code := kubegap(t, "audit", "-o", "policyreport", "-q", "--kubeconfig", auditKC)
	if code != 1 {
		t.Fatalf("audit -o policyreport: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(live, "    name: activator-pdb\n    namespace: knative-serving\n    uid: "+string(pdb.UID)+"\n") {
		t.Errorf("-o policyreport of the live cluster does not name PodDisruptionBudget knative-serving/activator-pdb with its UID %s", pdb.UID)
	}

	// Fix istio-system's gap: the next run deletes its report and keeps
	// the others.
	if err := admin.PolicyV1().PodDisruptionBudgets("istio-system").Delete(ctx, "istiod", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	out = run()
	t.Logf("second publish:\n%s", out)
	if _, err := dyn.Resource(policyReports).Namespace("istio-system").Get(ctx, "kubegap", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("istio-system's report after its gap was fixed: %v", err)
	}
	if !strings.Contains(out, "deleted PolicyReport istio-system/kubegap") {
		t.Errorf("publish did not say it deleted istio-system's report:\n%s", out)
	}
	for _, gns := range []string{"azure-workload-identity-system", "knative-serving"} {
		if _, err := dyn.Resource(policyReports).Namespace(gns).Get(ctx, "kubegap", metav1.GetOptions{}); err != nil {
			t.Errorf("%s's report after the second run: %v", gns, err)
		}
	}

	// A namespace audit publishes its namespace's report and a cluster
	// report of its own name; the other namespaces' reports and the
	// cluster-wide report stay. The next cluster-wide run deletes it.
	nsReport := filepath.Join(dir, "ns.json")
	if _, stderr, code := kubegap(t, "audit", "-n", "knative-serving", "-o", "json", "--fail-on", "none", "-q", "--output-file", nsReport, "--kubeconfig", auditKC); code != 0 {
		t.Fatalf("audit -n: exit %d\n%s", code, stderr)
	}
	if out, stderr, code := kubegap(t, "publish", "--from", nsReport, "--kubeconfig", publishKC); code != 0 {
		t.Fatalf("publish of a namespace audit: exit %d\n%s%s", code, out, stderr)
	}
	for _, name := range []string{"kubegap", "kubegap-knative-serving"} {
		if _, err := dyn.Resource(clusterPolicyReports).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("ClusterPolicyReport %s after a namespace audit's publish: %v", name, err)
		}
	}
	if _, err := dyn.Resource(policyReports).Namespace("azure-workload-identity-system").Get(ctx, "kubegap", metav1.GetOptions{}); err != nil {
		t.Errorf("a namespace audit's publish removed another namespace's report: %v", err)
	}
	out = run()
	if _, err := dyn.Resource(clusterPolicyReports).Get(ctx, "kubegap-knative-serving", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the namespace audit's cluster report after a cluster-wide run: %v\n%s", err, out)
	}

	// The same publisher writes OpenReports too (its role grants both).
	if out, stderr, code := kubegap(t, "publish", "--from", filepath.Join(dir, "report.json"), "--format", "openreports", "--kubeconfig", publishKC); code != 0 {
		t.Fatalf("publish --format openreports: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := dyn.Resource(openReports).Namespace("knative-serving").Get(ctx, "kubegap", metav1.GetOptions{}); err != nil {
		t.Errorf("no OpenReports Report in knative-serving: %v", err)
	}
	if _, err := dyn.Resource(openClusterReports).Get(ctx, "kubegap", metav1.GetOptions{}); err != nil {
		t.Errorf("no OpenReports ClusterReport: %v", err)
	}

	// Bad input: one line, exit 2, and not a single request.
	cut := filepath.Join(dir, "cut.json")
	whole, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, whole[:len(whole)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	badMark := c.Mark(t)
	_, stderr, code = kubegap(t, "publish", "--from", cut, "--kubeconfig", publishKC)
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "truncated") {
		t.Errorf("publish of a truncated report: exit %d, stderr %q", code, stderr)
	}
	publisher := "system:serviceaccount:" + ns + ":kubegap-publisher"
	if reqs := c.RequestsSince(t, badMark, publisher); len(reqs) != 0 {
		t.Errorf("publish of a truncated report sent %d requests, first %s %s", len(reqs), reqs[0].Verb, reqs[0].RequestURI)
	}

	// What each identity sent, from the API server's audit log.
	auditor := "system:serviceaccount:" + ns + ":kubegap"
	reads := c.RequestsSince(t, mark, auditor)
	if len(reads) == 0 {
		t.Fatalf("the audit log shows no request by %s", auditor)
	}
	for _, r := range reads {
		if r.Verb != "get" && r.Verb != "list" && r.Verb != "watch" {
			t.Errorf("%s sent %s %s", auditor, r.Verb, r.RequestURI)
		}
	}
	writes := c.RequestsSince(t, mark, publisher)
	verbs := map[string]int{}
	reportResources := map[string]bool{
		"wgpolicyk8s.io/policyreports": true, "wgpolicyk8s.io/clusterpolicyreports": true,
		"openreports.io/reports": true, "openreports.io/clusterreports": true,
	}
	for _, r := range writes {
		verbs[r.Verb]++
		if !reportResources[r.APIGroup+"/"+r.Resource] || r.Subresource != "" {
			t.Errorf("%s touched %s/%s %s: %s %s", publisher, r.APIGroup, r.Resource, r.Subresource, r.Verb, r.RequestURI)
		}
		if !slices.Contains([]string{"get", "list", "create", "update", "patch", "delete"}, r.Verb) {
			t.Errorf("%s sent %s %s", publisher, r.Verb, r.RequestURI)
		}
		if r.Code >= 400 {
			t.Errorf("%s: %s %s answered %d", publisher, r.Verb, r.RequestURI, r.Code)
		}
	}
	if verbs["patch"] == 0 || verbs["delete"] == 0 || verbs["list"] == 0 {
		t.Errorf("publisher verbs %v: want patches (apply), lists and the stale report's delete", verbs)
	}
	t.Logf("%s: %d requests, all get/list/watch; %s: %v, all on report objects", auditor, len(reads), publisher, verbs)
}

func hasResult(r *unstructured.Unstructured, policy, result string) bool {
	results, _, _ := unstructured.NestedSlice(r.Object, "results")
	for _, x := range results {
		m, _ := x.(map[string]any)
		if m["policy"] == policy && m["result"] == result {
			return true
		}
	}
	return false
}
