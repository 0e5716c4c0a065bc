package check

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/snapshot"
)

// podWorkloadsFixture has a pod of each kind of tie WorkloadVia makes: a
// ReplicaSet followed to its Deployment, a ReplicaSet missing from the
// input inferred from the Deployment's naming, a StatefulSet by UID, a
// DaemonSet by name only (no UID), a Job from labels alone, and a pod
// without any controller; several pods share each owner.
func podWorkloadsFixture() *snapshot.Snapshot {
	yes := true
	ctl := func(kind, name, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID(uid), Controller: &yes}}
	}
	s := snapshot.New(snapshot.Source{})
	_, addDeploy, _ := snapshot.ListKind(snapshot.Deployments)
	addDeploy(s, &appsv1.DeploymentList{Items: []appsv1.Deployment{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web", UID: "d-web"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "api", UID: "d-api"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}}}},
	}})
	_, addRS, _ := snapshot.ListKind(snapshot.ReplicaSets)
	addRS(s, &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "web-5d4f", UID: "rs-web", OwnerReferences: ctl("Deployment", "web", "d-web")}},
	}})
	var pods []corev1.Pod
	add := func(ns, name string, refs []metav1.OwnerReference, l map[string]string) {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, OwnerReferences: refs, Labels: l}})
	}
	for i := range 3 {
		add("a", fmt.Sprintf("web-%d", i), ctl("ReplicaSet", "web-5d4f", "rs-web"), nil)
		add("a", fmt.Sprintf("api-%d", i), ctl("ReplicaSet", "api-77aa", "rs-api"), map[string]string{"app": "api", "pod-template-hash": "77aa"})
		add("b", fmt.Sprintf("db-%d", i), ctl("StatefulSet", "db", "sts-db"), nil)
		add("b", fmt.Sprintf("agent-%d", i), ctl("DaemonSet", "agent", ""), nil)
		add("c", fmt.Sprintf("agent-%d", i), ctl("DaemonSet", "agent", ""), nil)
		add("b", fmt.Sprintf("job-%d", i), nil, map[string]string{"batch.kubernetes.io/job-name": "nightly", "batch.kubernetes.io/controller-uid": "j-1"})
		add("b", fmt.Sprintf("bare-%d", i), nil, nil)
	}
	// Pods of one missing ReplicaSet next to each other, with and without
	// the hash label: the tie of one says nothing about the next.
	add("a", "api-x-0", ctl("ReplicaSet", "api-77aa", "rs-api"), nil)
	add("a", "api-x-1", ctl("ReplicaSet", "api-77aa", "rs-api"), map[string]string{"app": "api", "pod-template-hash": "77aa"})
	add("a", "api-x-2", ctl("ReplicaSet", "api-77aa", "rs-api"), nil)
	// A StatefulSet's pods by a second reference to the same owner.
	add("b", "db-3", []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "sts-db"}, ctl("StatefulSet", "db", "sts-db")[0]}, nil)
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: pods})
	s.Finish()
	return s
}

// The table answers, for every pod, what WorkloadVia does, and groups pods
// by owner ID as snapshot.RefID does.
func TestPodWorkloadsAsWorkloadVia(t *testing.T) {
	s := podWorkloadsFixture()
	ix := s.Index()
	pw := BuildPodWorkloads(s)
	if len(pw.Of) != len(s.Pods) {
		t.Fatalf("table has %d pods, the snapshot %d", len(pw.Of), len(s.Pods))
	}
	groupOfID := map[snapshot.OwnerID]int32{}
	inferred := 0
	for i := range s.Pods {
		p := &s.Pods[i]
		ref, via, ok := ix.WorkloadVia(p)
		e := pw.Of[i]
		if !ok {
			if e != -1 {
				t.Errorf("pod %s/%s has no controller, the table says entry %d", p.Namespace, p.Name, e)
			}
			continue
		}
		if e < 0 {
			t.Errorf("pod %s/%s: WorkloadVia says %s %s, the table says none", p.Namespace, p.Name, ref.Kind, ref.Name)
			continue
		}
		w := pw.Workloads[e]
		if w.Ref.APIVersion != ref.APIVersion || w.Ref.Kind != ref.Kind || w.Ref.Name != ref.Name || w.Ref.UID != ref.UID || w.Namespace != p.Namespace {
			t.Errorf("pod %s/%s: table says %s %s/%s (%s), WorkloadVia %s %s (%s)", p.Namespace, p.Name, w.Ref.Kind, w.Namespace, w.Ref.Name, w.Ref.UID, ref.Kind, ref.Name, ref.UID)
		}
		if id := snapshot.RefID(p.Namespace, ref); w.ID != id || pw.Group(id) != w.Group {
			t.Errorf("pod %s/%s: ID %v group %d, want %v group %d", p.Namespace, p.Name, w.ID, w.Group, id, pw.Group(id))
		}
		if g, seen := groupOfID[w.ID]; seen && g != w.Group {
			t.Errorf("owner %v has groups %d and %d", w.ID, g, w.Group)
		}
		groupOfID[w.ID] = w.Group
		if got := pw.Via(i); got != via {
			t.Errorf("pod %s/%s: via %q, want %q", p.Namespace, p.Name, got, via)
		}
		if via != "" {
			inferred++
		}
	}
	// web (through its ReplicaSet), api (inferred), the ReplicaSet api-77aa
	// itself (api-x-0 and -2, no hash label), db, agent in b and in c (by
	// name: two owners), nightly.
	if pw.Groups != 7 || len(groupOfID) != 7 {
		t.Errorf("%d groups (%d distinct IDs seen), want 7", pw.Groups, len(groupOfID))
	}
	if inferred != 7 { // api's 3 pods, api-x-1 and the Job's 3
		t.Errorf("%d pods tied by inference, want 7", inferred)
	}
	if g := pw.Group(snapshot.OwnerID{UID: "nobody"}); g != -1 {
		t.Errorf("an owner of no pod has group %d, want -1", g)
	}
}

// PodWorkloadsOf builds the table once per index and builds it again when
// the snapshot's pods change (Drop builds a new index).
func TestPodWorkloadsOfOncePerIndex(t *testing.T) {
	s := podWorkloadsFixture()
	first := PodWorkloadsOf(s)
	if again := PodWorkloadsOf(s); again != first {
		t.Error("a second call for the same index built a new table")
	}
	s.Drop(snapshot.Pods)
	after := PodWorkloadsOf(s)
	if after == first || len(after.Of) != 0 {
		t.Errorf("after dropping the pods the table has %d pods, want a new empty one", len(after.Of))
	}
}

// PodPosition finds every pod of the snapshot at its index, and no pod
// outside it.
func TestPodPosition(t *testing.T) {
	s := podWorkloadsFixture()
	for i := range s.Pods {
		if got := PodPosition(s, &s.Pods[i]); got != i {
			t.Errorf("pod %d found at %d", i, got)
		}
	}
	other := podWorkloadsFixture()
	if got := PodPosition(s, &other.Pods[0]); got != -1 {
		t.Errorf("a pod of another snapshot found at %d", got)
	}
	if got := PodPosition(s, nil); got != -1 {
		t.Errorf("nil found at %d", got)
	}
	if got := PodPosition(snapshot.New(snapshot.Source{}), &s.Pods[0]); got != -1 {
		t.Errorf("a pod found at %d in a snapshot without pods", got)
	}
}

// PodNodesOf gives each pod the position of the node the index names for
// its spec.nodeName, -1 without one or for a node not in the input.
func TestPodNodesAsIndexNode(t *testing.T) {
	s := snapshot.New(snapshot.Source{})
	_, addNodes, _ := snapshot.ListKind(snapshot.Nodes)
	addNodes(s, &corev1.NodeList{Items: []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, {ObjectMeta: metav1.ObjectMeta{Name: "n3"}},
	}})
	var pods []corev1.Pod
	for i, node := range []string{"n2", "n2", "", "gone", "n1", "n3", "n2", "gone"} {
		pods = append(pods, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: fmt.Sprintf("p%d", i)}, Spec: corev1.PodSpec{NodeName: node}})
	}
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: pods})
	s.Finish()
	got := PodNodesOf(s)
	if len(got) != len(s.Pods) {
		t.Fatalf("%d entries for %d pods", len(got), len(s.Pods))
	}
	for i := range s.Pods {
		want := int32(-1)
		if n := s.Index().Node(s.Pods[i].Spec.NodeName); n != nil {
			for j := range s.Nodes {
				if &s.Nodes[j] == n {
					want = int32(j)
				}
			}
		}
		if got[i] != want {
			t.Errorf("pod %s on %q: node position %d, want %d", s.Pods[i].Name, s.Pods[i].Spec.NodeName, got[i], want)
		}
	}
	if again := PodNodesOf(s); &again[0] != &got[0] {
		t.Error("a second call built the table again")
	}
}
