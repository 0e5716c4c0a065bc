package owner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/owner"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestTableSourced: every row of the table names an https source, and the
// loader's checks (known providers, one marker kind per row, annotations
// the snapshot keeps) pass.
func TestTableSourced(t *testing.T) {
	checktest.FactsSourced(t)
	tab, err := owner.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Markers) == 0 {
		t.Fatal("no markers")
	}
}

// load writes the YAML documents to a file and reads them through the
// loader `kubegap audit --from` uses, trimming included: a marker the
// trimming dropped would not be seen.
func load(t *testing.T, docs ...string) *snapshot.Snapshot {
	t.Helper()
	p := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(docs, "\n---\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := snapshot.LoadPaths([]string{p})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func node(name, providerID string, labels ...string) string {
	l := ""
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		l += "\n    " + k + ": " + `"` + v + `"`
	}
	return `apiVersion: v1
kind: Node
metadata:
  name: ` + name + `
  labels:
    kubernetes.io/hostname: ` + name + l + `
spec:
  providerID: ` + providerID
}

func workload(kind, ns, name, meta string) string {
	return `apiVersion: apps/v1
kind: ` + kind + `
metadata:
  name: ` + name + `
  namespace: ` + ns + meta + `
spec:
  selector:
    matchLabels: {app: ` + name + `}
  template:
    metadata:
      labels: {app: ` + name + `}
    spec:
      containers:
      - name: c
        image: example.invalid/c:1`
}

func ref(kind, ns, name string) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name}
}

func mark(t *testing.T, s *snapshot.Snapshot, refs ...finding.ObjectRef) *finding.Owner {
	t.Helper()
	fs := []finding.Finding{{Check: "x", Objects: refs}}
	if err := owner.Mark(s, fs); err != nil {
		t.Fatal(err)
	}
	return fs[0].Owner
}

const eksNode = "ip-10-0-1-1"

func eksNodes() string {
	return node(eksNode, "aws:///us-west-2a/i-0abc", "eks.amazonaws.com/nodegroup=ng")
}

func TestAKSLabel(t *testing.T) {
	s := load(t,
		workload("Deployment", "kube-system", "coredns", "\n  labels:\n    kubernetes.azure.com/managedby: aks"),
		workload("Deployment", "kube-system", "mine", ""))
	o := mark(t, s, ref("Deployment", "kube-system", "coredns"))
	if o == nil || o.Provider != "AKS" || !strings.Contains(o.Marker, "kubernetes.azure.com/managedby=aks") {
		t.Fatalf("AKS-labelled Deployment: owner %+v", o)
	}
	if !strings.HasPrefix(o.Sentence(), "managed by AKS: not fixable in the cluster; ") {
		t.Errorf("sentence %q", o.Sentence())
	}
	if o := mark(t, s, ref("Deployment", "kube-system", "mine")); o != nil {
		t.Errorf("unlabelled Deployment marked %+v", o)
	}
	// One object of the user's among the provider's: the user has
	// something to fix, so the finding is not the provider's.
	if o := mark(t, s, ref("Deployment", "kube-system", "coredns"), ref("Deployment", "kube-system", "mine")); o != nil {
		t.Errorf("finding with a user object marked %+v", o)
	}
	// A value other than aks is not the marker.
	s = load(t, workload("Deployment", "kube-system", "coredns", "\n  labels:\n    kubernetes.azure.com/managedby: someone"))
	if o := mark(t, s, ref("Deployment", "kube-system", "coredns")); o != nil {
		t.Errorf("managedby=someone marked %+v", o)
	}
}

// TestNameNeedsCluster: a name marker holds only on the provider's nodes:
// anyone can name a DaemonSet eks-pod-identity-agent on kind.
func TestNameNeedsCluster(t *testing.T) {
	ds := workload("DaemonSet", "kube-system", "eks-pod-identity-agent", "")
	r := ref("DaemonSet", "kube-system", "eks-pod-identity-agent")
	o := mark(t, load(t, eksNodes(), ds), r)
	if o == nil || o.Provider != "EKS" || !strings.Contains(o.Advice, "--addon-name eks-pod-identity-agent") {
		t.Fatalf("on EKS nodes: owner %+v", o)
	}
	if o := mark(t, load(t, node("kind-worker", "kind://docker/kind/kind-worker"), ds), r); o != nil {
		t.Errorf("on kind nodes marked %+v", o)
	}
	if o := mark(t, load(t, ds), r); o != nil {
		t.Errorf("without nodes marked %+v", o)
	}
	// Same name, other namespace: not the add-on.
	other := workload("DaemonSet", "default", "eks-pod-identity-agent", "")
	if o := mark(t, load(t, eksNodes(), other), ref("DaemonSet", "default", "eks-pod-identity-agent")); o != nil {
		t.Errorf("in default marked %+v", o)
	}
}

// TestNodesAside: a Node named beside an owned workload does not keep the
// finding from being the provider's; Nodes alone are not marked.
func TestNodesAside(t *testing.T) {
	s := load(t, eksNodes(), workload("DaemonSet", "kube-system", "eks-pod-identity-agent", ""))
	n := finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: eksNode}
	if o := mark(t, s, ref("DaemonSet", "kube-system", "eks-pod-identity-agent"), n); o == nil {
		t.Error("owned DaemonSet with its Node not marked")
	}
	if o := mark(t, s, n); o != nil {
		t.Errorf("Node alone marked %+v", o)
	}
}

// TestPodOfOwnedWorkload: a Pod is judged by the workload controlling it.
func TestPodOfOwnedWorkload(t *testing.T) {
	pod := `apiVersion: v1
kind: Pod
metadata:
  name: kube-dns-abc
  namespace: kube-system
  ownerReferences:
  - {apiVersion: apps/v1, kind: DaemonSet, name: kube-dns, uid: u1, controller: true}
spec:
  nodeName: gke-n1
  containers:
  - {name: c, image: example.invalid/c:1}`
	gke := node("gke-n1", "gce://p/us-central1-a/gke-n1", "cloud.google.com/gke-nodepool=default-pool")
	ds := workload("DaemonSet", "kube-system", "kube-dns", "\n  labels:\n    addonmanager.kubernetes.io/mode: Reconcile")
	pr := finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "kube-system", Name: "kube-dns-abc"}
	o := mark(t, load(t, gke, ds, pod), pr)
	if o == nil || o.Provider != "GKE" || !strings.Contains(o.Marker, "controls Pod/kube-system/kube-dns-abc") {
		t.Fatalf("Pod of a reconciled DaemonSet on GKE: owner %+v", o)
	}
	// The addon manager label off GKE (minikube, kube-up) is the user's
	// own addon manager: not marked.
	kind := node("kind-worker", "kind://docker/kind/kind-worker")
	if o := mark(t, load(t, kind, ds, pod), pr); o != nil {
		t.Errorf("Reconcile label off GKE marked %+v", o)
	}
}

// TestK3sPackagedOnly: k3s's Addon owner annotations survive trimming and
// mark its packaged components, not a user's own file in the manifests
// directory.
func TestK3sPackagedOnly(t *testing.T) {
	ann := func(addon string) string {
		return "\n  annotations:\n    objectset.rio.cattle.io/owner-gvk: k3s.cattle.io/v1, Kind=Addon\n    objectset.rio.cattle.io/owner-name: " +
			addon + "\n    objectset.rio.cattle.io/owner-namespace: kube-system"
	}
	s := load(t,
		workload("Deployment", "kube-system", "coredns", ann("coredns")),
		workload("Deployment", "kube-system", "mine", ann("my-app")))
	o := mark(t, s, ref("Deployment", "kube-system", "coredns"))
	if o == nil || o.Provider != "k3s" {
		t.Fatalf("k3s packaged coredns: owner %+v", o)
	}
	if o := mark(t, s, ref("Deployment", "kube-system", "mine")); o != nil {
		t.Errorf("a user's Addon marked %+v", o)
	}
}
