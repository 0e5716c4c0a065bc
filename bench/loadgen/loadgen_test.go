package loadgen

import (
	"context"
	"fmt"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// load runs the generator against a fake clientset and returns its pods.
func load(t *testing.T, spec Spec) (*fake.Clientset, []corev1.Pod, Stats) {
	t.Helper()
	cs := fake.NewClientset()
	st, err := Run(context.Background(), cs, spec, nil)
	if err != nil {
		t.Fatalf("Run(%+v): %v", spec, err)
	}
	pods, err := cs.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(pods.Items, func(i, j int) bool {
		a, b := pods.Items[i], pods.Items[j]
		return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
	})
	return cs, pods.Items, st
}

func TestRunCreatesTheSpecifiedCluster(t *testing.T) {
	cases := []struct {
		nodes, pods int
		wantPods    int
	}{
		{nodes: 6, pods: 150, wantPods: 150},
		{nodes: 12, pods: 400, wantPods: 400},
		// Fewer pods than the DaemonSets need: the DaemonSets win.
		{nodes: 20, pods: 10, wantPods: 20*len(daemonSets) + 6},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%d nodes %d pods", c.nodes, c.pods), func(t *testing.T) {
			cs, pods, st := load(t, Spec{Nodes: c.nodes, Pods: c.pods, Workers: 8})
			if len(pods) != c.wantPods || st.Objects["Pod"] != c.wantPods {
				t.Errorf("%d pods listed, %d counted, want %d", len(pods), st.Objects["Pod"], c.wantPods)
			}
			nodes, err := cs.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != c.nodes {
				t.Errorf("%d nodes, want %d", len(nodes.Items), c.nodes)
			}
			for _, n := range nodes.Items {
				if n.Status.NodeInfo.OSImage == "" || n.Status.NodeInfo.KubeletVersion == "" || len(n.Status.Conditions) == 0 {
					t.Errorf("node %s has no status: %+v", n.Name, n.Status.NodeInfo)
				}
			}
			// Every node runs one pod of each DaemonSet.
			perNode := map[string]int{}
			for _, p := range pods {
				if len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Kind == "DaemonSet" {
					perNode[p.Spec.NodeName]++
				}
				if len(p.OwnerReferences) == 0 && p.Namespace != webhookNS {
					t.Errorf("pod %s/%s has no owner", p.Namespace, p.Name)
				}
				if p.Status.Phase == "" {
					t.Errorf("pod %s/%s has no phase", p.Namespace, p.Name)
				}
			}
			for _, n := range nodes.Items {
				if perNode[n.Name] != len(daemonSets) {
					t.Errorf("node %s runs %d DaemonSet pods, want %d", n.Name, perNode[n.Name], len(daemonSets))
				}
			}
			vw, _ := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().List(context.Background(), metav1.ListOptions{})
			if len(vw.Items) == 0 {
				t.Error("no validating webhook")
			}
		})
	}
}

func TestRunIsReproducible(t *testing.T) {
	digest := func(pods []corev1.Pod) []string {
		var out []string
		for _, p := range pods {
			out = append(out, fmt.Sprintf("%s/%s %s %s %d", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase, len(p.Status.ContainerStatuses)))
		}
		return out
	}
	_, a, _ := load(t, Spec{Nodes: 8, Pods: 150, Seed: 7, Workers: 16})
	_, b, _ := load(t, Spec{Nodes: 8, Pods: 150, Seed: 7, Workers: 3})
	_, c, _ := load(t, Spec{Nodes: 8, Pods: 150, Seed: 8, Workers: 16})
	da, db, dc := digest(a), digest(b), digest(c)
	if fmt.Sprint(da) != fmt.Sprint(db) {
		t.Errorf("same seed, different clusters:\n%v\n%v", da[:5], db[:5])
	}
	if fmt.Sprint(da) == fmt.Sprint(dc) {
		t.Error("seeds 7 and 8 gave the same cluster")
	}
}

func TestPodStatesAreRealistic(t *testing.T) {
	_, pods, st := load(t, Spec{Nodes: 20, Pods: 1000})
	count := map[string]int{}
	for _, p := range pods {
		switch {
		case p.Status.Phase == corev1.PodPending && p.Spec.NodeName == "":
			count["unschedulable"]++
		case p.Status.Phase == corev1.PodPending:
			count["pending on a node"]++
		case len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "CrashLoopBackOff":
			count["crashloop"]++
		case p.Status.Phase == corev1.PodRunning:
			count["running"]++
		}
	}
	n := len(pods)
	if count["running"] < n*8/10 {
		t.Errorf("running %d of %d, want most", count["running"], n)
	}
	for _, k := range []string{"unschedulable", "pending on a node", "crashloop"} {
		if count[k] == 0 || count[k] > n/10 {
			t.Errorf("%s: %d of %d, want some but few", k, count[k], n)
		}
	}
	if st.Objects["Event"] == 0 || st.Objects["PodDisruptionBudget"] == 0 || st.Objects["ReplicaSet"] == 0 || st.Objects["StatefulSet"] == 0 {
		t.Errorf("missing kinds: %v", st.Objects)
	}
}

func TestPoolsCoverTheOSMix(t *testing.T) {
	seen := map[string]bool{}
	for i := range 200 {
		seen[poolOf(i, 200).osImage] = true
	}
	want := map[string]bool{}
	for _, p := range pools {
		want[p.osImage] = true
	}
	if len(seen) != len(want) {
		t.Errorf("200 nodes use %d OS images, want all %d: %v", len(seen), len(want), seen)
	}
	if got := poolOf(0, 1); got == nil {
		t.Error("one node has no pool")
	}
}

func TestSpecRejectsBadSizes(t *testing.T) {
	for _, s := range []Spec{{Nodes: 0, Pods: 10}, {Nodes: 3, Pods: -1}} {
		if _, err := Run(context.Background(), fake.NewClientset(), s, nil); err == nil {
			t.Errorf("Run(%+v) succeeded, want an error", s)
		}
	}
}

func TestPodSuffixesAreUnique(t *testing.T) {
	s := Spec{Nodes: 1, Seed: 3}
	seen := map[string]int{}
	for i := range 300000 {
		k := s.podSuffix(i)
		if j, dup := seen[k]; dup {
			t.Fatalf("pods %d and %d share suffix %q", j, i, k)
		}
		seen[k] = i
	}
}
