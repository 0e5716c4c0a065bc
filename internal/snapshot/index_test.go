package snapshot

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
