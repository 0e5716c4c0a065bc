// Package testcluster runs a real Kubernetes control plane for end-to-end
// tests: kube-apiserver v1.37.2 on a real etcd, both on loopback, with static
// token users, RBAC and the audit log on. No controllers run, so every object
// a test needs (including status) is created by the test itself.
//
// One cluster serves one test package. Wire it up in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }
//
// and use it from tests:
//
//	c := testcluster.Get(t)
//	ns := c.Namespace(t)                              // deleted, contents and all, at the end
//	c.LoadYAMLInto(t, ns, "testdata/daemonset.yaml")  // any kind, status included
//	mark := c.Mark(t)
//	bin := testcluster.Kubegap(t)                     // built once, removed after the run
//	exec.Command(bin, "audit", "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader))
//	for _, r := range c.RequestsSince(t, mark, testcluster.UserReader) { ... }
//
// Users: UserAdmin (system:masters), UserReader (deploy/rbac.yaml's
// ClusterRole, cluster-wide), UserNSViewer (built-in "view" in
// ViewerNamespace only) and UserNobody (no bindings). Each has a REST config,
// a clientset and a kubeconfig file.
//
// The binaries come from the directory in $KUBEGAP_TESTBIN_DIR; when it is
// unset, hack/testbed-bin.sh finds or builds them (it caches them, so only
// the first run on a machine is slow). A missing binary fails the tests: the
// suite never skips the cluster. KUBEGAP_TESTBED_KEEP=1 keeps the cluster's
// directory (logs, audit log, kubeconfigs) after the run for debugging.
package testcluster
