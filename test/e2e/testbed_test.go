// Package e2e_test checks the end-to-end test bed itself: a real
// kube-apiserver with token users, RBAC, an audit log, and fixtures of any
// kind. Other e2e packages build on what these tests pin down.
package e2e_test

import (
	"context"
	"os"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

func TestServerVersion(t *testing.T) {
	c := testcluster.Get(t)
	// Any authenticated user may read /version; ask as the least privileged.
	v, err := c.Client(t, testcluster.UserNobody).Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("GET /version: %v", err)
	}
	if v.GitVersion != "v1.37.2" || v.Major != "1" || v.Minor != "37" {
		t.Errorf("/version = %s (major %q, minor %q), want v1.37.2", v.GitVersion, v.Major, v.Minor)
	}
}

func TestAuditLogRecordsWrites(t *testing.T) {
	c := testcluster.Get(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	admin := c.Client(t, testcluster.UserAdmin)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "audit-probe"}, Data: map[string]string{"k": "v"}}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the ConfigMap: %v", err)
	}

	// No sleep: Requests must see a write that has just returned.
	created := testcluster.Request{Verb: "create", Resource: "configmaps", Namespace: ns, Name: "audit-probe"}
	withAdmin := created
	withAdmin.User, withAdmin.Code = testcluster.UserAdmin, 201
	if !hasRequest(c.Requests(t, testcluster.UserAdmin), withAdmin) {
		t.Errorf("audit log has no create of configmaps in %s by admin", ns)
	}
	if hasRequest(c.Requests(t, testcluster.UserReader), created) {
		t.Errorf("audit log attributes the admin's create to the reader")
	}

	// A mark limits the view to what follows it.
	m := c.Mark(t)
	if _, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "audit-probe", metav1.GetOptions{}); err != nil {
		t.Fatalf("getting the ConfigMap: %v", err)
	}
	since := c.RequestsSince(t, m, testcluster.UserAdmin)
	got := testcluster.Request{User: testcluster.UserAdmin, Verb: "get", Resource: "configmaps", Namespace: ns, Name: "audit-probe", Code: 200}
	if !hasRequest(since, got) {
		t.Errorf("RequestsSince misses the get after the mark: %+v", since)
	}
	if hasRequest(since, created) {
		t.Errorf("RequestsSince returns the create made before the mark")
	}
}

// hasRequest reports whether reqs holds a request matching every
// non-zero field of want.
func hasRequest(reqs []testcluster.Request, want testcluster.Request) bool {
	for _, r := range reqs {
		if (want.User == "" || r.User == want.User) && (want.Verb == "" || r.Verb == want.Verb) &&
			(want.Resource == "" || r.Resource == want.Resource) &&
			(want.Namespace == "" || r.Namespace == want.Namespace) &&
			(want.Name == "" || r.Name == want.Name) && (want.Code == 0 || r.Code == want.Code) {
			return true
		}
	}
	return false
}

func TestRBAC(t *testing.T) {
	c := testcluster.Get(t)
	ns := c.Namespace(t)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "should-not-exist"}}
	tests := []struct {
		name      string
		user      string
		do        func(ctx context.Context, cs kubernetes.Interface) error
		forbidden bool
	}{
		{"reader cannot create", testcluster.UserReader, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
			return err
		}, true},
		{"reader lists pods cluster-wide", testcluster.UserReader, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}, false},
		{"reader cannot read secrets", testcluster.UserReader, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}, true},
		{"ns-viewer cannot list pods cluster-wide", testcluster.UserNSViewer, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}, true},
		{"ns-viewer lists pods in its namespace", testcluster.UserNSViewer, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods(testcluster.ViewerNamespace).List(ctx, metav1.ListOptions{})
			return err
		}, false},
		{"ns-viewer cannot list pods elsewhere", testcluster.UserNSViewer, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return err
		}, true},
		{"nobody cannot list pods", testcluster.UserNobody, func(ctx context.Context, cs kubernetes.Interface) error {
			_, err := cs.CoreV1().Pods(testcluster.ViewerNamespace).List(ctx, metav1.ListOptions{})
			return err
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(t.Context(), c.Client(t, tt.user))
			switch {
			case tt.forbidden && !apierrors.IsForbidden(err):
				t.Errorf("err = %v, want 403 Forbidden", err)
			case !tt.forbidden && err != nil:
				t.Errorf("err = %v, want success", err)
			}
		})
	}

	// The refusal is in the audit log too, with its status code.
	refused := testcluster.Request{User: testcluster.UserReader, Verb: "create", Resource: "configmaps", Namespace: ns, Code: 403}
	if !hasRequest(c.Requests(t, testcluster.UserReader), refused) {
		t.Errorf("audit log lacks the reader's refused create")
	}
}

func TestKubeconfigFiles(t *testing.T) {
	c := testcluster.Get(t)
	for _, user := range []string{testcluster.UserAdmin, testcluster.UserReader, testcluster.UserNSViewer, testcluster.UserNobody} {
		t.Run(user, func(t *testing.T) {
			cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig(t, user))
			if err != nil {
				t.Fatalf("loading kubeconfig: %v", err)
			}
			if cfg.Insecure {
				t.Errorf("kubeconfig skips TLS verification; want the server's CA")
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			// SelfSubjectReview tells who the server thinks we are, over
			// verified TLS.
			rev, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
			if err != nil {
				t.Fatalf("whoami: %v", err)
			}
			if got := rev.Status.UserInfo.Username; got != user {
				t.Errorf("kubeconfig authenticates as %q, want %q", got, user)
			}
		})
	}
}

func TestFixturesOfAnyKind(t *testing.T) {
	c := testcluster.Get(t)
	ctx := t.Context()
	ns := c.Namespace(t)
	created := c.LoadYAMLInto(t, ns, "testdata/nad.yaml", "testdata/node.yaml", "testdata/daemonset-pod.yaml")
	if len(created) != 5 {
		t.Fatalf("LoadYAMLInto returned %d objects, want 5", len(created))
	}

	// Read back as the reader, through the RBAC kubegap asks for.
	nadGVR := schema.GroupVersionResource{Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"}
	nad, err := c.Dynamic(t, testcluster.UserReader).Resource(nadGVR).Namespace(ns).Get(ctx, "macvlan-chained", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the NetworkAttachmentDefinition: %v", err)
	}
	if cfg, _, _ := unstructured.NestedString(nad.Object, "spec", "config"); cfg == "" {
		t.Errorf("NetworkAttachmentDefinition lost spec.config: %v", nad.Object)
	}

	reader := c.Client(t, testcluster.UserReader)
	node, err := reader.CoreV1().Nodes().Get(ctx, "testbed-node-ubuntu1804", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the Node: %v", err)
	}
	if got := node.Status.NodeInfo.OSImage; got != "Ubuntu 18.04.6 LTS" {
		t.Errorf("node osImage = %q, want the fixture's", got)
	}
	if got := node.Status.NodeInfo.KernelVersion; got != "5.4.0-1109-azure" {
		t.Errorf("node kernelVersion = %q, want the fixture's", got)
	}
	if len(node.Status.Conditions) != 1 || node.Status.Conditions[0].Type != corev1.NodeReady {
		t.Errorf("node conditions = %+v, want the fixture's Ready", node.Status.Conditions)
	}

	ds, err := reader.AppsV1().DaemonSets(ns).Get(ctx, "cni-agent", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the DaemonSet: %v", err)
	}
	if ds.Status.NumberReady != 1 || ds.Status.DesiredNumberScheduled != 1 {
		t.Errorf("DaemonSet status = %+v, want the fixture's", ds.Status)
	}
	pod, err := reader.CoreV1().Pods(ns).Get(ctx, "cni-agent-x7k2p", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting the Pod: %v", err)
	}
	if pod.Status.Phase != corev1.PodRunning || len(pod.Status.ContainerStatuses) != 1 ||
		pod.Status.ContainerStatuses[0].RestartCount != 3 {
		t.Errorf("pod status = %+v, want the fixture's", pod.Status)
	}
	if refs := pod.OwnerReferences; len(refs) != 1 || refs[0].UID != ds.UID {
		t.Errorf("pod ownerReferences = %+v, want the DaemonSet's real UID %s", refs, ds.UID)
	}
}

func TestCleanup(t *testing.T) {
	c := testcluster.Get(t)
	admin := c.Client(t, testcluster.UserAdmin)
	var ns string
	t.Run("populate", func(t *testing.T) {
		ns = c.Namespace(t)
		c.LoadYAMLInto(t, ns, "testdata/daemonset-pod.yaml")
		// A typed object without TypeMeta, cluster-scoped.
		c.Apply(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "testbed-cleanup-node"}})
	})
	// The subtest's cleanups have run: the namespace, its pod and the node
	// are gone, although no namespace controller runs.
	ctx := t.Context()
	if _, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after cleanup: err = %v, want NotFound", ns, err)
	}
	pods, err := admin.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	if len(pods.Items) != 0 {
		t.Errorf("%d pods left in %s after cleanup", len(pods.Items), ns)
	}
	if _, err := admin.CoreV1().Nodes().Get(ctx, "testbed-cleanup-node", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node after cleanup: err = %v, want NotFound", err)
	}
}

// TestFreeze: a frozen test bed answers nothing, and answers again once
// thawed (the benchmark freezes it while it measures offline audits).
func TestFreeze(t *testing.T) {
	c := testcluster.Get(t)
	cs := c.Client(t, testcluster.UserAdmin)
	thaw := c.Freeze(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	_, err := cs.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	cancel()
	if err == nil {
		t.Error("a frozen API server answered")
	}
	thaw()
	if _, err := cs.Discovery().ServerVersion(); err != nil {
		t.Fatalf("after thawing: %v", err)
	}
}
