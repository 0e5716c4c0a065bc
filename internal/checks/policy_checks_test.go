package checks_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// policyChecks are issue 14's credential-broker, GitOps and request checks,
// each with its clean fixture.
var policyChecks = map[string]string{
	"credential-broker-duration": "agents/testdata/credential-broker-duration/clean.yaml",
	"gitops-global-prune":        "gitops/testdata/gitops-global-prune/clean.yaml",
	"gitops-deletion-guard":      "gitops/testdata/gitops-deletion-guard/clean.yaml",
	"unrequested-memory":         "resources/testdata/unrequested-memory/clean.yaml",
	"stale-token-clients":        "versions/testdata/stale-token-clients/clean.yaml",
}

// Their clean fixtures pass when read as a whole cluster and are partial,
// never pass, as plain files: an object missing from files may exist.
func TestPolicyChecksPartialFromFiles(t *testing.T) {
	for id, fixture := range policyChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			t.Fatalf("no check %s", id)
		}
		for _, complete := range []bool{true, false} {
			s := checktest.Load(t, "../"+fixture)
			want := report.Partial
			if complete {
				s, want = checktest.Complete(s), report.Pass
			}
			r := audit.Run(s, []check.Check{c}, audit.Options{})
			if len(r.Checks) != 1 || r.Checks[0].Status != want {
				t.Errorf("%s (complete %v): %+v, want %s", id, complete, r.Checks, want)
			}
		}
	}
}

// policySnapshot is areaSnapshot with each gap at scale: a third of the
// pods ask for no memory, a kiam server at its defaults, a thousand pods on
// an old Kiali, and 200 ApplicationSets pruning into 10 clusters each.
func policySnapshot() *snapshot.Snapshot {
	s := areaSnapshot()
	for i := range s.Pods {
		s.Pods[i].Spec.Own()
		s.Pods[i].Spec.Containers = slices.Clone(s.Pods[i].Spec.Containers) // loaded pods share equal containers
		if i%3 == 0 {
			for j := range s.Pods[i].Spec.Containers {
				s.Pods[i].Spec.Containers[j].Resources = snapshot.Resources{}
			}
		}
	}
	for i := range s.Pods {
		if i%100 == 1 {
			s.Pods[i].Spec.Containers[0].Image = "quay.io/kiali/kiali:v1.45.0"
		}
	}
	s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kiam-server", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "kiam", Image: "quay.io/uswitch/kiam:v4.2", Command: []string{"/kiam"}, Args: []string{"server"}}}}}},
	})
	var sets, apps []unstructured.Unstructured
	for i := range 200 {
		name := fmt.Sprintf("set-%03d", i)
		sets = append(sets, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
			"metadata": map[string]any{"name": name, "namespace": "argocd"},
			"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"syncPolicy": map[string]any{"automated": map[string]any{"prune": true}}}}},
		}})
		for c := range 10 {
			apps = append(apps, unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
				"metadata": map[string]any{"name": fmt.Sprintf("%s-%d", name, c), "namespace": "argocd",
					"finalizers": []any{"resources-finalizer.argocd.argoproj.io"},
					"ownerReferences": []any{map[string]any{"apiVersion": "argoproj.io/v1alpha1",
						"kind": "ApplicationSet", "name": name, "uid": name}}},
				"spec": map[string]any{"destination": map[string]any{"server": fmt.Sprintf("https://cell-%d.example.com", c)}},
			}})
		}
	}
	// The ApplicationSet controller on its default policy (sync): the
	// generated Applications above carry the resources finalizer.
	s.Deployments = append(s.Deployments, appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "argocd-applicationset-controller", Namespace: "argocd"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "argocd-applicationset-controller", Image: "quay.io/argoproj/argocd:v2.11.3",
			Args: []string{"/usr/local/bin/argocd-applicationset-controller"}}}}}},
	})
	s.AddCustom(snapshot.ArgoApplicationSets, sets)
	s.AddCustom(snapshot.ArgoApplications, apps)
	return s
}

// policyBenchChecks are the checks BenchmarkPolicyChecks times.
var policyBenchChecks = checks.BenchIDs("BenchmarkPolicyChecks", slices.Sorted(maps.Keys(policyChecks))...)

// BenchmarkPolicyChecks times the checks above at 5,000 nodes and 100,000
// pods: go test -run NONE -bench PolicyChecks ./internal/checks/
func BenchmarkPolicyChecks(b *testing.B) {
	s := policySnapshot()
	for _, id := range policyBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		if fs, err := c.Run(&check.Context{Snapshot: s}); err != nil || len(fs) == 0 {
			b.Fatalf("%s: %d findings, %v: the benchmark snapshot must hold its gap", id, len(fs), err)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Run(&check.Context{Snapshot: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
