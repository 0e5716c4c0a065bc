package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

// TestRemovedAPIWrittenThroughLive: a live Deployment last applied by
// kubectl from an extensions/v1beta1 manifest (its last-applied
// configuration says so, and the server keeps it as written) is found by
// the removed-apis check, read as the read-only user; the audit log shows
// only reads. (The test bed serves no removed version to create through,
// and kube-apiserver 1.37 drops managedFields entries of versions it does
// not serve, so the last-applied record is the live trace to test.)
func TestRemovedAPIWrittenThroughLive(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	admin := c.Client(t, testcluster.UserAdmin)
	one := int32(1)
	lastApplied := `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"legacy-api","namespace":"` + ns +
		`"},"spec":{"replicas":1,"template":{"metadata":{"labels":{"app":"legacy-api"}},"spec":{"containers":[{"name":"api","image":"registry.example/legacy-api:2.3"}]}}}}`
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "legacy-api", Namespace: ns,
			Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: lastApplied}},
		Spec: appsv1.DeploymentSpec{Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "legacy-api"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "legacy-api"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "api", Image: "registry.example/legacy-api:2.3"}}}}},
	}
	if _, err := admin.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--checks", "removed-apis", "-o", "json")
	if r.code == 2 {
		t.Fatalf("audit: %s", r.stderr)
	}
	var rep struct {
		Findings []struct {
			Severity, Title string
			Objects         []struct{ Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range rep.Findings {
		for _, o := range f.Objects {
			if o.Kind == "Deployment" && o.Namespace == ns && o.Name == "legacy-api" {
				found = strings.Contains(f.Title, "extensions/v1beta1 Deployment") && f.Severity == "low"
			}
		}
	}
	if !found {
		t.Errorf("no low finding on the Deployment written through extensions/v1beta1:\n%s", r.stdout)
	}
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
}

// TestPreflightLive: --target-version runs the preflight against a live
// cluster, marks its findings and states the target; nothing but reads.
func TestPreflightLive(t *testing.T) {
	c := loadDemo(t)
	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--target-version", "1.38", "-o", "json")
	if r.code == 2 {
		t.Fatalf("audit: %s", r.stderr)
	}
	var rep struct {
		TargetVersion string
		Checks        []struct{ ID, Status string }
		Findings      []struct{ Check, Preflight, Title string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.TargetVersion != "1.38" {
		t.Errorf("targetVersion %q", rep.TargetVersion)
	}
	ran := false
	for _, ch := range rep.Checks {
		ran = ran || ch.ID == "upgrade-preflight"
	}
	if !ran {
		t.Error("upgrade-preflight did not run")
	}
	for _, f := range rep.Findings {
		if f.Check == "upgrade-preflight" && f.Preflight == "" {
			t.Errorf("preflight finding without its phase: %s", f.Title)
		}
	}
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
	text := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--target-version", "1.38")
	if !strings.Contains(text.stdout, "UPGRADE PLAN TO 1.38") {
		t.Errorf("the text report has no upgrade plan:\n%s", text.stdout)
	}
}

// TestPreflightLiveMidUpgrade: a target equal to the live API server's
// minor (kube-apiserver v1.37.2, the demo's nodes loaded with older
// kubelets) is a mid-upgrade preflight: the check runs, only its
// control-plane path is skipped, the stated version and the plan are in
// the report; nothing but reads.
func TestPreflightLiveMidUpgrade(t *testing.T) {
	c := loadDemo(t)
	mark := c.Mark(t)
	r := run(t, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "--target-version", "1.37", "-o", "json")
	if r.code == 2 {
		t.Fatalf("audit: %s", r.stderr)
	}
	var rep struct {
		CurrentVersion *struct {
			Version  string
			Inferred bool
		}
		Checks []struct {
			ID, Status string
			Rules      []struct{ ID, Status string }
		}
		Plan []struct{ FindingID, Check, Phase string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.CurrentVersion == nil || rep.CurrentVersion.Version != "1.37" || rep.CurrentVersion.Inferred {
		t.Errorf("currentVersion = %+v", rep.CurrentVersion)
	}
	for _, ch := range rep.Checks {
		if ch.ID != "upgrade-preflight" {
			continue
		}
		if ch.Status == "not-evaluated" {
			t.Errorf("upgrade-preflight not evaluated at the server's own minor")
		}
		for _, rr := range ch.Rules {
			if (rr.ID == "control-plane-path") != (rr.Status == "skipped") {
				t.Errorf("rule %s is %s", rr.ID, rr.Status)
			}
		}
	}
	if len(rep.Plan) == 0 {
		t.Errorf("no plan for nodes below 1.37:\n%s", r.stdout)
	}
	for _, st := range rep.Plan {
		if st.FindingID == "" || st.Check == "" || (st.Phase != "before" && st.Phase != "during") {
			t.Errorf("plan step %+v", st)
		}
	}
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
}
