package snapshot

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

func TestPodsControlledBy(t *testing.T) {
	yes := true
	pod := func(name string, ref metav1.OwnerReference) corev1.Pod {
		ref.Controller = &yes
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: []metav1.OwnerReference{ref}}}
	}
	s := New(Source{})
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{
		pod("by-uid", metav1.OwnerReference{Kind: "DaemonSet", Name: "a", UID: "uid-a"}),
		pod("by-name-a", metav1.OwnerReference{Kind: "DaemonSet", Name: "a"}),
		pod("by-name-b", metav1.OwnerReference{Kind: "DaemonSet", Name: "b"}),
		pod("other-kind", metav1.OwnerReference{Kind: "ReplicaSet", Name: "a"}),
	}})
	s.Finish()
	ix := s.Index()
	names := func(ps []*Pod) (out []string) {
		for _, p := range ps {
			out = append(out, p.Name)
		}
		return out
	}
	tests := []struct {
		owner metav1.ObjectMeta
		want  []string
	}{
		{metav1.ObjectMeta{Namespace: "ns", Name: "a", UID: "uid-a"}, []string{"by-uid"}},
		{metav1.ObjectMeta{Namespace: "ns", Name: "a"}, []string{"by-name-a"}},
		{metav1.ObjectMeta{Namespace: "ns", Name: "b"}, []string{"by-name-b"}},
		{metav1.ObjectMeta{Namespace: "other", Name: "a"}, nil},
		{metav1.ObjectMeta{Namespace: "ns", Name: "c"}, nil},
	}
	for _, tc := range tests {
		got := names(ix.PodsControlledBy(IDOf("DaemonSet", &tc.owner)))
		if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
			t.Errorf("DaemonSet %s/%s uid %q owns %v, want %v", tc.owner.Namespace, tc.owner.Name, tc.owner.UID, got, tc.want)
		}
	}
}

// WorkloadOf follows a pod's ReplicaSet to its Deployment when the input
// holds the ReplicaSet, and stops at the pod's own controller otherwise.
func TestWorkloadOf(t *testing.T) {
	yes := true
	ctl := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
	}
	s := New(Source{})
	s.ReplicaSets = []appsv1.ReplicaSet{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1", UID: "rs-1",
		OwnerReferences: ctl("Deployment", "web", "d-1")}}}
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-1-a", OwnerReferences: ctl("ReplicaSet", "web-1", "rs-1")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "old-2-a", OwnerReferences: ctl("ReplicaSet", "old-2", "rs-2")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare"}},
	}})
	s.Finish()
	ix := s.Index()
	want := map[string]string{"web-1-a": "Deployment/web", "old-2-a": "ReplicaSet/old-2", "bare": ""}
	for i := range s.Pods {
		p := &s.Pods[i]
		o, ok := ix.WorkloadOf(p)
		got := ""
		if ok {
			got = o.Kind + "/" + o.Name
		}
		if got != want[p.Name] {
			t.Errorf("WorkloadOf(%s) = %q, want %q", p.Name, got, want[p.Name])
		}
	}
	if len(s.Pods) != len(want) {
		t.Fatalf("%d pods", len(s.Pods))
	}
}

// WorkloadVia infers the owner the input does not hold from what the
// Deployment, Job and CronJob controllers guarantee about names and
// labels, and says so; where the name or labels do not fit, it stops at
// the pod's own controller.
func TestWorkloadViaInferences(t *testing.T) {
	yes := true
	ctl := func(apiVersion, kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
	}
	rsPod := func(name, rs, hash string, l map[string]string) corev1.Pod {
		labels := map[string]string{"pod-template-hash": hash}
		for k, v := range l {
			labels[k] = v
		}
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels,
			OwnerReferences: ctl("apps/v1", "ReplicaSet", rs, "rs-"+name)}}
	}
	s := New(Source{})
	s.Deployments = []appsv1.Deployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "d-web"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-api", UID: "d-web-api"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web-api"}}}},
	}
	s.CronJobs = []batchv1.CronJob{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backup", UID: "cj-1"}}}
	s.Jobs = []batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report-29012345", UID: "j-r",
		OwnerReferences: ctl("batch/v1", "CronJob", "report", "cj-r")}}}
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{
		rsPod("web-5d78c9869d-a", "web-5d78c9869d", "5d78c9869d", map[string]string{"app": "web"}),
		// "web-api-<hash>" belongs to web-api, not to web.
		rsPod("web-api-7f9c-b", "web-api-7f9c", "7f9c", map[string]string{"app": "web-api"}),
		// The name fits, but the Deployment's selector does not select the pod.
		rsPod("web-6c4d-c", "web-6c4d", "6c4d", map[string]string{"app": "other"}),
		// The hash label does not end the ReplicaSet's name.
		rsPod("web-1111-d", "web-1111", "2222", map[string]string{"app": "web"}),
		// No Deployment of that name.
		rsPod("gone-8b8b-e", "gone-8b8b", "8b8b", map[string]string{"app": "web"}),
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backup-29012345-x", OwnerReferences: ctl("batch/v1", "Job", "backup-29012345", "j-1")}},
		// Too few digits for a scheduled minute.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "backup-12-x", OwnerReferences: ctl("batch/v1", "Job", "backup-12", "j-2")}},
		// The Job is in the input: its owner is read, not inferred.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "report-29012345-x", OwnerReferences: ctl("batch/v1", "Job", "report-29012345", "j-r")}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "labelled", Labels: map[string]string{
			"batch.kubernetes.io/job-name": "backup-29012346", "batch.kubernetes.io/controller-uid": "j-3"}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "legacy-labels", Labels: map[string]string{
			"job-name": "once", "controller-uid": "j-4"}}},
		// A job-name label without the UID proves nothing.
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "half-labelled", Labels: map[string]string{"job-name": "once"}}},
	}})
	s.Finish()
	ix := s.Index()
	want := map[string]struct {
		ref      string
		inferred bool
	}{
		"web-5d78c9869d-a":  {"Deployment/web/d-web", true},
		"web-api-7f9c-b":    {"Deployment/web-api/d-web-api", true},
		"web-6c4d-c":        {"ReplicaSet/web-6c4d/rs-web-6c4d-c", false},
		"web-1111-d":        {"ReplicaSet/web-1111/rs-web-1111-d", false},
		"gone-8b8b-e":       {"ReplicaSet/gone-8b8b/rs-gone-8b8b-e", false},
		"backup-29012345-x": {"CronJob/backup/cj-1", true},
		"backup-12-x":       {"Job/backup-12/j-2", false},
		"report-29012345-x": {"CronJob/report/cj-r", false},
		"labelled":          {"CronJob/backup/cj-1", true},
		"legacy-labels":     {"Job/once/j-4", true},
		"half-labelled":     {"", false},
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		o, via, ok := ix.WorkloadVia(p)
		got := ""
		if ok {
			got = o.Kind + "/" + o.Name + "/" + string(o.UID)
		}
		w := want[p.Name]
		if got != w.ref || (via != "") != w.inferred {
			t.Errorf("WorkloadVia(%s) = %q via %q, want %q (inferred %v)", p.Name, got, via, w.ref, w.inferred)
		}
	}
	if len(s.Pods) != len(want) {
		t.Fatalf("%d pods, want %d", len(s.Pods), len(want))
	}
}

// TestPodsMatchingByLabelIndex: PodsMatching answers through the label
// index exactly what a scan of the namespace answers, in the same order,
// for selectors with and without a one-value equality requirement.
func TestPodsMatchingByLabelIndex(t *testing.T) {
	s := New(Source{})
	for i := range 60 {
		ns := []string{"a", "b"}[i%2]
		lb := map[string]string{"app": fmt.Sprintf("w%d", i%5)}
		if i%3 == 0 {
			lb["tier"] = "front"
		}
		s.Pods = append(s.Pods, Pod{SharedPodMeta: &SharedPodMeta{Namespace: ns, Labels: lb}, Name: fmt.Sprintf("p%02d", i)})
	}
	s.Finish()
	ix := s.Index()
	for _, expr := range []string{"app=w1", "tier==front", "app==w2,tier=front", "app in (w3)", "app in (w1,w4)", "tier", "!tier,app!=w0", "app=none", "tier=front,app notin (w1)"} {
		sel, err := labels.Parse(expr)
		if err != nil {
			t.Fatal(err)
		}
		for _, ns := range []string{"a", "b", "c"} {
			var want []*Pod
			for _, p := range ix.PodsInNamespace(ns) {
				if sel.Matches(labels.Set(p.Labels)) {
					want = append(want, p)
				}
			}
			if got := ix.PodsMatching(ns, sel); !slices.Equal(got, want) {
				t.Errorf("%s in %s: %d pods, want %d (%v)", expr, ns, len(got), len(want), got)
			}
			if ns == "a" && len(want) == 0 && expr != "app=none" {
				t.Errorf("%s matches nothing in a: the comparison would not tell", expr)
			}
		}
	}
}
