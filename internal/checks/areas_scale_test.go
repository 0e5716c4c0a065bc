package checks

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// withAreaLoad adds to the large snapshot what the certs, objects and
// agents checks read: a CA bundle on every webhook, 10,000 terminated
// pods, 5 old ReplicaSets per Deployment, 5,000 finished Jobs, 2,000
// ClusterRoles and ClusterRoleBindings (every DaemonSet's ServiceAccount
// bound to a role that reads pods), counted AuthRequests and Events, and
// an etcd static pod with its database at 80 % of its quota.
func withAreaLoad(b *testing.B, s *snapshot.Snapshot) *snapshot.Snapshot {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bench"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(20 * 24 * time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		b.Fatal(err)
	}
	bundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	for i := range s.ValidatingWebhookConfigurations {
		for j := range s.ValidatingWebhookConfigurations[i].Webhooks {
			s.ValidatingWebhookConfigurations[i].Webhooks[j].ClientConfig.CABundle = bundle
		}
	}
	for i := 0; i < len(s.Pods); i += 10 {
		s.Pods[i].Status.Phase = corev1.PodFailed
		s.Pods[i].Status.Own()
		s.Pods[i].Status.Reason = "Evicted"
	}
	isCtrl, zero := true, int32(0)
	for _, d := range s.Deployments {
		for k := range 5 {
			s.ReplicaSets = append(s.ReplicaSets, appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-old-%d", d.Name, k), Namespace: d.Namespace,
					UID:             types.UID(fmt.Sprintf("%s-old-%d", d.UID, k)),
					OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: &isCtrl}}},
				Spec: appsv1.ReplicaSetSpec{Replicas: &zero}})
		}
	}
	for i := range 5000 {
		s.Jobs = append(s.Jobs, batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("job-%05d", i), Namespace: "ns-000"},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}})
	}
	for i := range 2000 {
		name := fmt.Sprintf("role-%04d", i)
		s.ClusterRoles = append(s.ClusterRoles, rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get"}}}})
		s.ClusterRoleBindings = append(s.ClusterRoleBindings, rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "ns-001", Name: name}}})
	}
	s.ClusterRoles = append(s.ClusterRoles, rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "agent-reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"list", "watch"}}}})
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		ds.Spec.Template.Spec.ServiceAccountName = ds.Name
		s.ClusterRoleBindings = append(s.ClusterRoleBindings, rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ds.Name},
			RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: "agent-reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ds.Namespace, Name: ds.Name}}})
	}
	s.AddCount(snapshot.DexAuthRequests, 250000)
	s.AddCount(snapshot.EventCounts, 400000)
	// etcd-capacity-signals: a kubeadm etcd static pod with a 2 GiB quota
	// and a database at 80 % of it.
	etcd := snapshot.Pod{Name: "etcd-cp-1", SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "kube-system", Annotations: map[string]string{"kubernetes.io/config.mirror": "bench"}}}
	etcd.Spec.Own()
	etcd.Spec.Containers = []snapshot.Container{{Name: "etcd", Image: "registry.k8s.io/etcd:3.5.21-0",
		Command: []string{"etcd", "--quota-backend-bytes=2147483648"}}}
	s.Pods = append(s.Pods, etcd)
	s.AddStorageSizes(snapshot.StorageSize{Metric: "apiserver_storage_size_bytes", Label: "storage_cluster_id", LabelValue: "etcd-0",
		Value: "1717986918", Bytes: 1717986918, From: "bench"})
	// api-write-latency: single-object write series for 200 built-in
	// resources and four verbs, every tenth over the SLO.
	for i := range 200 {
		for j, verb := range []string{"POST", "PUT", "PATCH", "DELETE"} {
			within := 99999.0
			if (i+j)%10 == 0 {
				within = 90000
			}
			s.AddWriteLatency(snapshot.WriteLatency{Verb: verb, Group: "apps", Version: "v1", Resource: fmt.Sprintf("res%03d", i),
				Count: 100000, Within1s: within, From: "bench"})
		}
	}
	// custom-resource-size: 2,000 Argo CD Applications as a live read
	// records them, one of them at 1.1 MiB.
	apps := make([]unstructured.Unstructured, 2000)
	for i := range apps {
		apps[i].SetAPIVersion("argoproj.io/v1alpha1")
		apps[i].SetKind("Application")
		apps[i].SetNamespace("argocd")
		apps[i].SetName(fmt.Sprintf("app-%d", i))
	}
	apps[7].SetAnnotations(map[string]string{snapshot.AnnotationSerializedBytes: "1153433"})
	s.AddCustom(snapshot.ArgoApplications, apps)
	s.Finish()
	return s
}

// areaChecksBench are the checks BenchmarkAreaChecks times.
var areaChecksBench = benchIDs("BenchmarkAreaChecks", "certificate-expiry", "object-count-explosion", "api-heavy-node-agents",
	"etcd-capacity-signals", "custom-resource-size", "api-write-latency")

// BenchmarkAreaChecks times the certs, objects and agents checks on 5,000
// nodes and 100,000 pods: go test -run NONE -bench AreaChecks ./internal/checks/
func BenchmarkAreaChecks(b *testing.B) {
	s := withAreaLoad(b, largeSnapshot())
	timeChecksOn(b, s, areaChecksBench)
}

// timeChecksOn times each check of ids on s as a sub-benchmark (CPU per run
// beside the wall time) and fails one that finds nothing: the snapshots
// are built full of their checks' gaps.
func timeChecksOn(b *testing.B, s *snapshot.Snapshot, ids []string) {
	b.Helper()
	for _, id := range ids {
		c, ok := Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s})
				if err != nil {
					b.Fatal(err)
				}
				n = len(fs)
			}
			if n == 0 {
				b.Fatalf("%s found nothing on a snapshot full of its gaps", id)
			}
		})
	}
}
