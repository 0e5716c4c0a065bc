package objects

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// TestEtcdCapacityK3s: three k3s servers on the embedded etcd with the
// default 2 GiB quota and a database of 1.5 GiB (75 %) are high, naming
// the servers and quoting the series; at 400 MiB (20 %) the rule is
// evaluated and silent.
func TestEtcdCapacityK3s(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-capacity-signals/gap"))
	fs, ctx, ok := checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if !ok || len(fs) != 1 {
		t.Fatalf("findings %+v (evaluated %v)", fs, ok)
	}
	f := fs[0]
	if f.Severity != finding.High || !strings.Contains(f.Title, "75% of its 2.00 GiB") || !checktest.HasObject(fs, "Node", "", "k3s-server-1") ||
		f.Cases[0] != caseEmbeddedEtcd {
		t.Errorf("finding %+v", f)
	}
	ev := strings.Join(f.Evidence, "\n")
	if !strings.Contains(ev, `etcd_db_total_size_in_bytes{endpoint="https://127.0.0.1:2379"} 1610612736`) || !strings.Contains(ev, "https://github.com/rancher/k3k/issues/815") {
		t.Errorf("evidence %v", f.Evidence)
	}
	if n := ctx.Notes()[ruleDBSize]; n.Reason != "" {
		t.Errorf("size and quota known, yet %+v", n)
	}

	s = checktest.Complete(checktest.Load(t, "etcd-capacity-signals/ok"))
	fs, ctx, _ = checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if len(fs) != 0 || ctx.Notes()[ruleDBSize].Reason != "" {
		t.Errorf("20%% of the quota: findings %+v, notes %+v", fs, ctx.Notes())
	}

	// A raised quota in the servers' etcd-args: 1.5 GiB of 8 GiB is quiet.
	s = checktest.Complete(checktest.Load(t, "etcd-capacity-signals/gap"))
	for i := range s.Nodes {
		s.Nodes[i].Annotations[k3sNodeArgs] = `["server","--etcd-arg","quota-backend-bytes=8589934592","--secrets-encryption"]`
	}
	if fs, _, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s); len(fs) != 0 {
		t.Errorf("8 GiB quota: %+v", fs)
	}
	// ... and a 2.5 GiB one makes 1.5 GiB a medium (60 %).
	for i := range s.Nodes {
		s.Nodes[i].Annotations[k3sNodeArgs] = `["server","--etcd-arg","quota-backend-bytes=2684354560"]`
	}
	if fs, _, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s); len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("2.5 GiB quota: %+v", fs)
	}
}

// TestEtcdCapacityUnknown: no quota in the input (no etcd pod, no k3s
// etcd server) or no size series leaves the rule partial, never a pass.
func TestEtcdCapacityUnknown(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "etcd-capacity-signals/gap"))
	for i := range s.Nodes {
		delete(s.Nodes[i].Labels, etcdRoleLabel)
	}
	fs, ctx, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if n := ctx.Notes()[ruleDBSize]; len(fs) != 0 || n.Reason == "" || !strings.Contains(n.Reason, "1.50 GiB") {
		t.Errorf("no quota: findings %+v, note %+v", fs, n)
	}
	s = checktest.Complete(checktest.Load(t, "etcd-capacity-signals/gap"))
	s.StorageSizes = nil
	fs, ctx, _ = checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if len(fs) != 0 || ctx.Notes()[ruleDBSize].Reason == "" {
		t.Errorf("no size series: findings %+v, notes %+v", fs, ctx.Notes())
	}
}

// TestEtcdCapacityStaticPod: a kubeadm etcd static pod's flag is the
// quota; without the flag etcd's 2 GiB default applies.
func TestEtcdCapacityStaticPod(t *testing.T) {
	s := snapshot.New(snapshot.Source{})
	s.AddStorageSizes(snapshot.StorageSize{Metric: "apiserver_storage_size_bytes", Label: "storage_cluster_id", LabelValue: "etcd-0",
		Value: "1200000000", Bytes: 1.2e9, From: "GET /metrics"})
	pod := snapshot.Pod{Name: "etcd-cp-1", SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "kube-system", Annotations: map[string]string{"kubernetes.io/config.mirror": "x"}}}
	pod.Spec.Own()
	pod.Spec.Containers = []snapshot.Container{{Name: "etcd", Image: "registry.k8s.io/etcd:3.5.21-0",
		Command: []string{"etcd", "--data-dir=/var/lib/etcd", "--quota-backend-bytes=1610612736"}}}
	s.Pods = append(s.Pods, pod)
	s.Finish()
	s = checktest.Complete(s)
	fs, _, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.High || !checktest.HasObject(fs, "Pod", "kube-system", "etcd-cp-1") ||
		!strings.Contains(fs[0].Message, "--quota-backend-bytes=1610612736") {
		t.Fatalf("1.2 GB of 1.5 GiB: %+v", fs)
	}
	s.Pods[0].Spec.Containers[0].Command = []string{"etcd", "--data-dir=/var/lib/etcd"}
	fs, _, _ = checktest.Run(t, etcdCapacitySignalsCheck(), s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Message, "etcd's default quota of 2.00 GiB") {
		t.Errorf("1.2 GB of the 2 GiB default: %+v", fs)
	}
}

// TestEtcdCapacityManaged: on a fresh AKS, EKS or GKE dump the provider's
// etcd is not the rule's to judge: evaluated, silent; on the k3s and kind
// dumps (self-managed, no size series in their metrics.txt) the rule is
// partial, never a pass.
func TestEtcdCapacityManaged(t *testing.T) {
	for _, p := range []string{"aks", "eks", "gke"} {
		s := checktest.Load(t, "../../testdata/managed/"+p)
		fs, ctx, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s)
		n := ctx.Notes()[ruleDBSize]
		if len(fs) != 0 || n.Kind != check.Settled || !strings.Contains(n.Reason, "its quota is not in the API") {
			t.Errorf("%s: findings %+v, note %+v", p, fs, n)
		}
	}
	s := checktest.Load(t, "../../testdata/managed/kind")
	if fs, ctx, _ := checktest.Run(t, etcdCapacitySignalsCheck(), s); len(fs) != 0 || ctx.Notes()[ruleDBSize].Kind == check.Settled || ctx.Notes()[ruleDBSize].Reason == "" {
		t.Errorf("kind: findings %+v, notes %+v", fs, ctx.Notes())
	}
}
