package checks_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// providerSnapshot is areaSnapshot turned into a self-managed-etcd EKS
// shape with every gap the provider checks look for: Amazon Linux 2 nodes,
// a tenth of them on the recalled v20221027 kernel, a CoreDNS older than
// AWS lists for 1.33, and three etcd static pods, one restarting and
// probed by etcdctl.
func providerSnapshot(b testing.TB) *snapshot.Snapshot {
	s := areaSnapshot()
	s.Source.ServerVersion = "v1.33.4-eks-0a1b2c3"
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.OSImage = "Amazon Linux 2"
		s.Nodes[i].Status.NodeInfo.KernelVersion = "5.10.238-231.953.amzn2.x86_64"
		if i%10 == 0 {
			s.Nodes[i].Status.NodeInfo.KernelVersion = "5.4.217-126.408.amzn2.x86_64"
		}
	}
	replicas := int32(2)
	dns := map[string]string{"k8s-app": "kube-dns"}
	s.Deployments = append(s.Deployments, appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: dns},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "coredns",
				Image: "602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/coredns:v1.11.4-eksbuild.2"}}}}}})
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
		Command: []string{"/bin/sh", "-ec", "ETCDCTL_API=3 etcdctl get foo"}}}, TimeoutSeconds: 15, FailureThreshold: 8}
	for i := range 3 {
		s.Pods = append(s.Pods, snapshot.Pod{
			Name: fmt.Sprintf("etcd-cp-%d", i),
			SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "kube-system",
				Labels:      map[string]string{"component": "etcd"},
				Annotations: map[string]string{"kubernetes.io/config.mirror": "x"}},
			Spec: snapshot.PodSpec{NodeName: s.Nodes[i].Name, SharedPodSpec: &snapshot.SharedPodSpec{Containers: []snapshot.Container{{
				Name: "etcd", Image: "registry.k8s.io/etcd:3.5.21-0", LivenessProbe: probe}}}},
			Status: snapshot.PodStatus{ContainerStatuses: []snapshot.ContainerStatus{{Name: "etcd", RestartCount: int32(90 * i)}}},
		})
	}
	return s
}

// providerBenchChecks are the checks BenchmarkProviderChecks times.
var providerBenchChecks = checks.BenchIDs("BenchmarkProviderChecks", "eks-coredns-version", "kernel-cni-known-bad", "control-plane-restarts")

// BenchmarkProviderChecks times the checks of issue 14's provider cases at
// 5,000 nodes and 100,000 pods, and fails if one finds nothing:
// go test -run NONE -bench ProviderChecks ./internal/checks/
func BenchmarkProviderChecks(b *testing.B) {
	benchEach(b, providerSnapshot(b), providerBenchChecks, 1)
}

// clusterDNSBenchChecks are the checks BenchmarkClusterDNSRelease times.
var clusterDNSBenchChecks = checks.BenchIDs("BenchmarkClusterDNSRelease", "cluster-dns-known-bad-release")

// BenchmarkClusterDNSRelease times cluster-dns-known-bad-release on the
// 5,000-node, 100,000-pod snapshot with its gap planted from the check's
// fixture: a kube-system CoreDNS Deployment on 1.3.1. Apart from
// BenchmarkProviderChecks, whose EKS CoreDNS the check would judge instead
// (it reads the first k8s-app=kube-dns Deployment of kube-system).
// go test -run NONE -bench ClusterDNSRelease ./internal/checks/
func BenchmarkClusterDNSRelease(b *testing.B) {
	s := areaSnapshot()
	plantFixtures(b, s, "dns/testdata/cluster-dns-known-bad-release/gap.yaml")
	benchEach(b, s, clusterDNSBenchChecks, 1)
}

// pullFailureBenchChecks are the checks BenchmarkRegistryPullFailures times.
var pullFailureBenchChecks = checks.BenchIDs("BenchmarkRegistryPullFailures", "registry-pull-failures")

// BenchmarkRegistryPullFailures times registry-pull-failures on the
// 5,000-node, 100,000-pod snapshot, whose every pod's container statuses
// it walks, with the cr.l5d.io outage of its fixture planted.
// go test -run NONE -bench RegistryPullFailures ./internal/checks/
func BenchmarkRegistryPullFailures(b *testing.B) {
	s := areaSnapshot()
	plantFixtures(b, s, "registries/testdata/registry-pull-failures/linkerd-install.yaml")
	benchEach(b, s, pullFailureBenchChecks, 1)
}
