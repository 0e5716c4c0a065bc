// Package etcdcap tests etcd-capacity-signals against the real
// kube-apiserver v1.37.2 and its etcd: the storage size the API server
// exports on /metrics, read live, from a saved file and from a snapshot,
// against the quota of an etcd static pod's mirror in kube-system.
package etcdcap

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/test/e2e/testcluster"
)

func TestMain(m *testing.M) { os.Exit(testcluster.Main(m)) }

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, args ...string) result {
	t.Helper()
	code, out, errOut := testcluster.Run(t, args...)
	return result{code, out, errOut}
}

type report struct {
	Checks []struct {
		ID, Status string
		Rules      []struct{ ID, Status, Reason string }
	}
	Findings []struct {
		Check, Severity, Title string
		Objects                []struct{ Kind, Namespace, Name string }
		Evidence               []string
	}
}

func audit(t *testing.T, args ...string) report {
	t.Helper()
	r := run(t, append([]string{"audit", "--checks", "etcd-capacity-signals", "-o", "json"}, args...)...)
	if r.code == 2 {
		t.Fatalf("audit %v: exit 2: %s", args, r.stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding the report: %v\n%s", err, r.stdout)
	}
	return rep
}

const series = `apiserver_storage_size_bytes{storage_cluster_id="etcd-0"}`

// storageSize reads the series from the real /metrics with the real
// kubectl: a bound on the value an audit run next to it may quote.
func storageSize(t *testing.T, c *testcluster.Cluster) (metrics []byte, bytes float64) {
	t.Helper()
	out, err := exec.Command(c.Kubectl(), "--kubeconfig", c.Kubeconfig(t, testcluster.UserReader), "get", "--raw", "/metrics").Output()
	if err != nil {
		t.Fatalf("kubectl get --raw /metrics: %v", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			b, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", l, err)
			}
			return out, b
		}
	}
	t.Fatalf("kube-apiserver v1.37.2 exports no %s", series)
	return nil, 0
}

// TestStorageSizeLive: without a quota in the cluster (the test bed's etcd
// is a process, not a pod) the rule is partial and says the real size;
// with an etcd static pod's mirror whose --quota-backend-bytes puts that
// size at 80 %, the live audit, a saved /metrics and a snapshot each give
// one high finding quoting the real series.
func TestStorageSizeLive(t *testing.T) {
	c := testcluster.Get(t)
	kc := c.Kubeconfig(t, testcluster.UserReader)
	_, before := storageSize(t, c)
	t.Logf("real %s before: %.0f bytes", series, before)

	mark := c.Mark(t)
	rep := audit(t, "--kubeconfig", kc)
	testcluster.CheckRequests(t, c.RequestsSince(t, mark, testcluster.UserReader), testcluster.Allow{})
	if len(rep.Findings) != 0 || len(rep.Checks) != 1 || rep.Checks[0].Status != "partial" ||
		!strings.Contains(rep.Checks[0].Rules[0].Reason, series) || !strings.Contains(rep.Checks[0].Rules[0].Reason, "no etcd quota") {
		t.Fatalf("without a quota: %+v", rep)
	}
	t.Logf("no quota: %s", rep.Checks[0].Rules[0].Reason)

	// kubeadm's etcd static pod as its mirror shows it; the quota is the
	// real size / 0.8 (the database file only grows until defragmented).
	quota := int64(before / 0.8)
	pod := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "etcd-testbed", Namespace: "kube-system",
			Labels:      map[string]string{"component": "etcd", "tier": "control-plane"},
			Annotations: map[string]string{"kubernetes.io/config.mirror": "testbed"}},
		Spec: corev1.PodSpec{NodeName: "testbed-cp-1", Containers: []corev1.Container{{Name: "etcd", Image: "registry.k8s.io/etcd:3.6.5-0",
			Command: []string{"etcd", "--data-dir=/var/lib/etcd", fmt.Sprintf("--quota-backend-bytes=%d", quota)}}}},
	}
	c.Apply(t, pod)
	t.Cleanup(func() {
		err := c.Client(t, testcluster.UserAdmin).CoreV1().Pods("kube-system").Delete(context.Background(), pod.Name, metav1.DeleteOptions{})
		if err != nil {
			t.Errorf("deleting the etcd mirror pod: %v", err)
		}
	})

	// The database grows while the test runs, so the value an audit
	// quotes is checked against real readings taken before and after it:
	// it must lie between them (the file only grows until defragmented).
	check := func(name string, rep report, lo, hi float64) {
		t.Helper()
		if len(rep.Findings) != 1 {
			t.Fatalf("%s: findings %+v", name, rep.Findings)
		}
		f := rep.Findings[0]
		ev := strings.Join(f.Evidence, "\n")
		quoted := false
		for _, e := range f.Evidence {
			rest, ok := strings.CutPrefix(e, series+" ")
			if !ok {
				continue
			}
			v, _, _ := strings.Cut(rest, " ")
			b, err := strconv.ParseFloat(v, 64)
			quoted = quoted || (err == nil && b >= lo && b <= hi)
		}
		if f.Severity != "high" || len(f.Objects) != 1 || f.Objects[0].Kind != "Pod" || f.Objects[0].Name != "etcd-testbed" || !quoted ||
			!strings.Contains(ev, fmt.Sprintf("--quota-backend-bytes=%d", quota)) {
			t.Errorf("%s: %+v, want high on Pod kube-system/etcd-testbed quoting %s between %.0f and %.0f", name, f, series, lo, hi)
		}
		t.Logf("%s: %s %s; evidence %q", name, f.Severity, f.Title, f.Evidence)
	}

	rep = audit(t, "--kubeconfig", kc)
	metrics, after := storageSize(t, c)
	check("live", rep, before, after)

	dir := t.TempDir()
	metricsPath := dir + "/metrics.txt"
	if err := os.WriteFile(metricsPath, metrics, 0o600); err != nil {
		t.Fatal(err)
	}
	podYAML, err := exec.Command(c.Kubectl(), "--kubeconfig", kc, "get", "pods", "-n", "kube-system", "-o", "yaml").Output()
	if err != nil {
		t.Fatalf("kubectl get pods: %v", err)
	}
	podsPath := dir + "/pods.yaml"
	if err := os.WriteFile(podsPath, podYAML, 0o600); err != nil {
		t.Fatal(err)
	}
	check("saved /metrics", audit(t, "--from", metricsPath, "--from", podsPath), after, after)

	snap := dir + "/snap.json"
	if r := run(t, "snapshot", "--kubeconfig", kc, "-o", snap, "-q"); r.code != 0 {
		t.Fatalf("snapshot: exit %d: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	var head struct {
		StorageSizes []struct{ Metric, Label, LabelValue, Value string }
	}
	if err := json.Unmarshal(raw, &head); err != nil || len(head.StorageSizes) != 1 || head.StorageSizes[0].Metric != "apiserver_storage_size_bytes" {
		t.Fatalf("the snapshot's storageSizes: %+v (%v)", head.StorageSizes, err)
	}
	_, latest := storageSize(t, c)
	check("snapshot", audit(t, "--from", snap), after, latest)
	t.Logf("snapshot keeps %+v", head.StorageSizes)
}
