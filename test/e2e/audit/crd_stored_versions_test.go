package audit_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// storedVersionCRD is a CRD of group whose versions are given as name,
// served, storage triples; any object is accepted.
func storedVersionCRD(group string, versions ...[3]any) *unstructured.Unstructured {
	var vs []any
	for _, v := range versions {
		vs = append(vs, map[string]any{"name": v[0], "served": v[1], "storage": v[2],
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}})
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets." + group},
		"spec": map[string]any{"group": group, "scope": "Namespaced", "versions": vs,
			"names": map[string]any{"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"}},
	}}
}

// TestCRDStoredVersionDriftLive: the real API server records in
// status.storedVersions the version an object was written in; once the CRD
// moves storage to v1 and stops serving v1alpha1, crd-stored-version-drift
// reports it (medium, quoting the list the server wrote), and the trim
// command its remediation suggests runs with the real kubectl and clears it.
func TestCRDStoredVersionDriftLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	group := ns + ".e2e.kubegap.dev"
	crdName := "widgets." + group
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	admin := c.Dynamic(t, testcluster.UserAdmin)
	ctx := context.Background()
	// The CRD is cluster-scoped and would outlive the test: remove it.
	t.Cleanup(func() { _ = admin.Resource(crdGVR).Delete(context.Background(), crdName, metav1.DeleteOptions{}) })

	c.Apply(t, storedVersionCRD(group, [3]any{"v1alpha1", true, true}))
	c.Apply(t, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns}, "spec": map[string]any{"size": int64(1)},
	}})
	// Move storage to v1 and stop serving v1alpha1, as an operator release
	// does before it drops the version.
	cur, err := admin.Resource(crdGVR).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	next := storedVersionCRD(group, [3]any{"v1alpha1", false, false}, [3]any{"v1", true, true})
	cur.Object["spec"] = next.Object["spec"]
	if _, err := admin.Resource(crdGVR).Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	type fnd struct {
		Check, Severity, Remediation string
		Objects                      []struct{ Kind, Name string }
		Evidence                     []string
	}
	audit := func() []fnd {
		t.Helper()
		r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "crd-stored-version-drift", "-o", "json")
		if r.code == 2 {
			t.Fatalf("the audit could not run: %s", r.stderr)
		}
		rep, _ := decode(t, r)
		var mine []fnd
		for _, raw := range rep.Findings {
			var f fnd
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			for _, o := range f.Objects {
				if o.Kind == "CustomResourceDefinition" && o.Name == crdName {
					mine = append(mine, f)
				}
			}
		}
		return mine
	}
	got := audit()
	if len(got) != 1 || got[0].Severity != "medium" {
		t.Fatalf("findings naming %s: %+v, want one medium", crdName, got)
	}
	if ev := strings.Join(got[0].Evidence, "\n"); !strings.Contains(ev, `status.storedVersions=["v1alpha1","v1"]`) ||
		!strings.Contains(ev, "spec.versions[name=v1alpha1].served=false") {
		t.Errorf("evidence does not quote what the API server wrote:\n%s", ev)
	}

	// The object is rewritten at v1 (a read and an unchanged write), then
	// the suggested trim runs as written.
	w := admin.Resource(schema.GroupVersionResource{Group: group, Version: "v1", Resource: "widgets"}).Namespace(ns)
	obj, err := w.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cmd := regexp.MustCompile(`kubectl patch customresourcedefinition ` + regexp.QuoteMeta(crdName) + ` [^']*'[^']*'`).FindString(got[0].Remediation)
	if cmd == "" {
		t.Fatalf("no trim command for %s in %q", crdName, got[0].Remediation)
	}
	sh := exec.Command("sh", "-c", cmd)
	sh.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig(t, testcluster.UserAdmin),
		"PATH="+filepath.Dir(c.Kubectl())+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	if got := audit(); len(got) != 0 {
		t.Errorf("after the migration: %+v, want no finding on %s", got, crdName)
	}
}

// TestRuntimeDefaultChangeLive: a live read keeps a Deployment's added
// capabilities and privileged flag (the template trim), so a Tailscale
// proxy with NET_ADMIN that may run on a node reporting containerd 1.7.24
// is high, and the same proxy made privileged is not reported.
func TestRuntimeDefaultChangeLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	node := &corev1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"},
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-worker"},
		Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "Ubuntu 22.04.5 LTS",
			ContainerRuntimeVersion: "containerd://1.7.24", KubeletVersion: "v1.37.2"}}}
	proxy := func(name string, privileged bool) *appsv1.Deployment {
		labels := map[string]string{"app": name}
		sc := &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
		if privileged {
			sc.Privileged = &privileged
		}
		return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
					// The API server's admission taints a new Node not-ready;
					// the proxies tolerate every taint so that the node admits them.
					Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
						Containers: []corev1.Container{{Name: "tailscale", Image: "tailscale/tailscale:stable", SecurityContext: sc}}}}}}
	}
	c.Apply(t, node, proxy("ts-proxy", false), proxy("ts-proxy-privileged", true))
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "runtime-default-change-exposure", "-o", "json")
	if r.code == 2 {
		t.Fatalf("the audit could not run: %s", r.stderr)
	}
	rep, _ := decode(t, r)
	named := map[string]string{} // Deployment in ns -> severity
	for _, raw := range rep.Findings {
		var f struct {
			Severity string
			Objects  []struct{ Kind, Namespace, Name string }
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatal(err)
		}
		for _, o := range f.Objects {
			if o.Kind == "Deployment" && o.Namespace == ns {
				named[o.Name] = f.Severity
			}
		}
	}
	if named["ts-proxy"] != "high" {
		t.Errorf("ts-proxy: %q, want high (NET_ADMIN, not privileged, a node on containerd 1.7.24)", named["ts-proxy"])
	}
	if sev, ok := named["ts-proxy-privileged"]; ok {
		t.Errorf("the privileged proxy is reported %s: the live read lost its privileged flag", sev)
	}
}
