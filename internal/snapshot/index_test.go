package snapshot

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
