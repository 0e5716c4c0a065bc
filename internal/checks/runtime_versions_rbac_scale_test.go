package checks

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks/rbac"
	"github.com/kubegap/kubegap/internal/checks/runtime"
	"github.com/kubegap/kubegap/internal/checks/versions"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// runtimeVersionsRBACSnapshot is largeSnapshot (5,000 nodes, 100,000 pods)
// with what the runtime, versions and rbac checks read: node runtimes,
// kernels and OS images (a tenth on kernel 7.2 or CentOS 7 or Docker or
// Debian 10 with kernel 4.19, a tenth on kubelet 1.26), kube-proxy 1.16 in IPVS mode, Flannel
// 0.10.0 with --ip-masq and a VXLAN backend, a Cilium agent pod on every
// node, a Docker socket mount on every 50th pod, an old Kiali image on
// every 100th, the VPC CNI's policy agent v1.0.8 enforcing 3,000
// NetworkPolicies,
// etcd and ingress-nginx in kube-system, a Tailscale proxy with NET_ADMIN, and 2,000 ClusterRoles with their
// bindings, one of them aggregated.
func runtimeVersionsRBACSnapshot() *snapshot.Snapshot {
	s := largeSnapshot()
	for i := range s.Nodes {
		info := &s.Nodes[i].Status.NodeInfo
		info.KubeletVersion, info.ContainerRuntimeVersion, info.KernelVersion = "v1.33.4", "containerd://1.7.12", "6.8.0-85-generic"
		switch i % 10 {
		case 1:
			info.KernelVersion = "7.2.0-200.fc44.x86_64"
		case 2:
			info.OSImage, info.KernelVersion = "CentOS Linux 7 (Core)", "3.10.0-1160.el7.x86_64"
		case 3:
			info.ContainerRuntimeVersion = "docker://24.0.7"
		case 4:
			info.OSImage, info.KernelVersion = "Debian GNU/Linux 10 (buster)", "4.19.0-26-amd64"
		case 5:
			info.KubeletVersion = "v1.26.15" // below 1.27: the built-in kubelet API rate limit of 5
		}
	}
	// Calico IPAM: a /12 pool in /26 blocks (16,384), one block per node
	// and 10,000 more held for nodes that are gone.
	pool := unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "IPPool",
		"metadata": map[string]any{"name": "default-ipv4-ippool"}, "spec": map[string]any{"cidr": "100.64.0.0/12", "blockSize": int64(26)}}}
	s.AddCustom(snapshot.CalicoIPPools, []unstructured.Unstructured{pool})
	affs := make([]unstructured.Unstructured, 0, len(s.Nodes)+10000)
	for i := 0; i < len(s.Nodes)+10000; i++ {
		node := fmt.Sprintf("gone-%05d", i)
		if i < len(s.Nodes) {
			node = s.Nodes[i].Name
		}
		cidr := fmt.Sprintf("100.%d.%d.%d/26", 64+i/1024, (i/4)%256, (i%4)*64)
		affs = append(affs, unstructured.Unstructured{Object: map[string]any{"apiVersion": "crd.projectcalico.org/v1", "kind": "BlockAffinity",
			"metadata": map[string]any{"name": fmt.Sprintf("aff-%05d", i)}, "spec": map[string]any{"node": node, "cidr": cidr, "state": "confirmed", "deleted": "false"}}})
	}
	s.AddCustom(snapshot.CalicoBlockAffinities, affs)
	for _, r := range []snapshot.Resource{snapshot.CalicoIPPools, snapshot.CalicoBlockAffinities, snapshot.Nodes} {
		s.SetComplete(r, nil)
	}
	sock := corev1.HostPathSocket
	for i := range s.Pods {
		p := &s.Pods[i]
		p.Spec.Own()
		p.Spec.Containers = slices.Clone(p.Spec.Containers) // loaded pods share equal containers
		if i < len(s.Nodes) {
			p.Spec.Containers[0].Image = "quay.io/cilium/cilium:v1.20.1"
		}
		if i%100 == 7 {
			p.Spec.Containers[0].Image = "quay.io/kiali/kiali:v1.45.0"
		}
		if i%50 == 0 {
			p.Spec.Volumes = append(p.Spec.Volumes, snapshot.HostPathVolume{Name: "docker-sock", Path: "/var/run/docker.sock", Type: &sock})
		}
	}
	for i := range s.Deployments {
		if i%20 == 0 {
			t := &s.Deployments[i].Spec.Template.Spec
			t.Volumes = append(t.Volumes, corev1.Volume{Name: "d", VolumeSource: corev1.VolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: "/run/docker.sock", Type: &sock}}})
			t.ServiceAccountName = fmt.Sprintf("sa-%d", i)
		}
	}
	tmpl := func(image, sa string, args ...string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{ServiceAccountName: sa,
			Containers: []corev1.Container{{Name: "c", Image: image, Args: args}}}}
	}
	s.Deployments = append(s.Deployments,
		appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system"},
			Spec: appsv1.DeploymentSpec{Template: tmpl("registry.k8s.io/coredns/coredns:v1.11.3", "coredns")}},
		appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cluster-autoscaler", Namespace: "kube-system"},
			Spec: appsv1.DeploymentSpec{Template: tmpl("registry.k8s.io/autoscaling/cluster-autoscaler:v1.33.0", "cluster-autoscaler")}},
		appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "ingress-nginx-controller", Namespace: "ingress-nginx"},
			Spec: appsv1.DeploymentSpec{Template: tmpl("registry.k8s.io/ingress-nginx/controller:v1.11.4", "ingress-nginx", "--validating-webhook=:8443")}},
		appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "ts-proxy", Namespace: "tailscale"},
			Spec: appsv1.DeploymentSpec{Template: tmpl("tailscale/tailscale:stable", "proxies")}},
	)
	// A Tailscale proxy with NET_ADMIN, not privileged: it relies on
	// runc's default tun/tap allow (runtime-default-change-exposure).
	ts := &s.Deployments[len(s.Deployments)-1].Spec.Template.Spec.Containers[0]
	ts.SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
	s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "cilium", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: tmpl("quay.io/cilium/cilium:v1.20.1", "cilium")}},
		appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
			Spec: appsv1.DaemonSetSpec{Template: tmpl("k8s.gcr.io/kube-proxy:v1.16.15", "kube-proxy", "--proxy-mode=ipvs")}})
	flannel := tmpl("quay.io/coreos/flannel:v0.10.0-amd64", "flannel", "--ip-masq", "--kube-subnet-mgr")
	flannel.Spec.Containers[0].Command = []string{"/opt/bin/flanneld"}
	flannel.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "flannel-cfg", MountPath: "/etc/kube-flannel/"}}
	flannel.Spec.Volumes = []corev1.Volume{{Name: "flannel-cfg", VolumeSource: corev1.VolumeSource{
		ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-flannel-cfg"}}}}}
	s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "kube-flannel-ds", Namespace: "kube-flannel"},
		Spec: appsv1.DaemonSetSpec{Template: flannel}})
	s.ConfigMaps = append(s.ConfigMaps, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-flannel-cfg", Namespace: "kube-flannel"},
		Data: map[string]string{"net-conf.json": `{"Network": "10.244.0.0/16", "Backend": {"Type": "vxlan"}}`}})
	// 2,000 CiliumNetworkPolicies, one in ten with a DNS rule
	// (cilium-dns-proxy-restart): the finding lists a capped few.
	var cnps []unstructured.Unstructured
	for i := range 2000 {
		port := map[string]any{"ports": []any{map[string]any{"port": "53", "protocol": "ANY"}}}
		if i%10 == 0 {
			port["rules"] = map[string]any{"dns": []any{map[string]any{"matchPattern": "*"}}}
		}
		cnps = append(cnps, unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": map[string]any{"name": fmt.Sprintf("allow-dns-%d", i), "namespace": fmt.Sprintf("team-%d", i%50)},
			"spec":     map[string]any{"endpointSelector": map[string]any{}, "egress": []any{map[string]any{"toPorts": []any{port}}}},
		}})
	}
	s.AddCustom(snapshot.CiliumNetworkPolicies, cnps)
	// The VPC CNI's node agent v1.0.8 enforcing 3,000 NetworkPolicies
	// (vpc-cni-policy-startup-race): the finding lists a capped few.
	s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "aws-node", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{Template: tmpl("602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent:v1.0.8-eksbuild.1",
			"aws-node", "--enable-network-policy=true")}})
	for i := range 3000 {
		s.NetworkPolicies = append(s.NetworkPolicies, networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("np-%d", i), Namespace: fmt.Sprintf("team-%d", i%50)}})
	}
	var etcd []corev1.Pod
	for i := range 3 {
		etcd = append(etcd, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("etcd-cp-%d", i), Namespace: "kube-system"},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%04d", i), Containers: []corev1.Container{{Name: "etcd", Image: "registry.k8s.io/etcd:3.5.9-0"}}}})
	}
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: etcd})
	for i := range 2000 {
		name := fmt.Sprintf("role-%d", i)
		s.ClusterRoles = append(s.ClusterRoles, rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name,
			Labels: map[string]string{"aggregate": fmt.Sprint(i%2 == 0)}},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}}}})
		s.ClusterRoleBindings = append(s.ClusterRoleBindings, rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{Kind: "ClusterRole", Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "coredns"}}})
	}
	s.ClusterRoles = append(s.ClusterRoles, rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:coredns"},
		AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: map[string]string{"aggregate": "true"}}}}})
	// A Strimzi 0.45 operator with 300 Kafka clusters still on ZooKeeper
	// (kafka-zookeeper-removal: one finding each).
	op := tmpl("quay.io/strimzi/operator:0.45.0", "strimzi-cluster-operator")
	op.Spec.Containers[0].Name = "strimzi-cluster-operator"
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "strimzi-cluster-operator", Namespace: "kafka"},
		Spec: appsv1.DeploymentSpec{Template: op}})
	kafkas := make([]unstructured.Unstructured, 300)
	for i := range kafkas {
		kafkas[i].Object = map[string]any{"apiVersion": "kafka.strimzi.io/v1beta2", "kind": "Kafka",
			"metadata": map[string]any{"name": fmt.Sprintf("kafka-%d", i), "namespace": fmt.Sprintf("team-%d", i%30)},
			"spec":     map[string]any{"zookeeper": map[string]any{"replicas": int64(3)}},
			"status":   map[string]any{"kafkaMetadataState": "ZooKeeper"}}
	}
	s.AddCustom(snapshot.StrimziKafkas, kafkas)
	s.Finish()
	return s
}

// runtimeVersionsImages is what --inspect-images would return for every
// image of the snapshot: every tenth app image carries Java 11.0.14 (no
// cgroup v2 support, built before the kernel 6.12 fix), and app images
// ending in 5 at the hundreds are Docker schema 1.
func runtimeVersionsImages(s *snapshot.Snapshot) map[string]check.ImageFacts {
	out := map[string]check.ImageFacts{}
	for i, w := range runtime.WorkloadImages(s) {
		f := check.ImageFacts{Image: w.Image, MediaType: "application/vnd.oci.image.manifest.v1+json", LayersRead: true}
		switch {
		case i%100 == 5:
			f = check.ImageFacts{Image: w.Image, MediaType: "application/vnd.docker.distribution.manifest.v1+prettyjws"}
		case i%10 == 0:
			f.Java = []check.JavaRuntime{{Home: "/opt/java/openjdk", Version: "11.0.14", Date: "2022-01-18", VM: "Hotspot"}}
		}
		out[w.Image] = f
	}
	return out
}

// runtimeVersionsRBACBench are the checks BenchmarkRuntimeVersionsRBACChecks
// times: every check of the rbac, runtime and versions areas.
var runtimeVersionsRBACBench = benchChecks("BenchmarkRuntimeVersionsRBACChecks",
	slices.Concat(rbac.Checks(), runtime.Checks(), versions.Checks())...)

// BenchmarkRuntimeVersionsRBACChecks measures the runtime, versions and
// rbac area checks at 5,000 nodes and 100,000 pods; each must stay within
// 0.5 s per run.
func BenchmarkRuntimeVersionsRBACChecks(b *testing.B) {
	s := runtimeVersionsRBACSnapshot()
	imgs := runtimeVersionsImages(s)
	for _, c := range runtimeVersionsRBACBench {
		b.Run(c.ID, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Run(&check.Context{Snapshot: s, Images: imgs}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// scaledElsewhere are the founding checks of these areas, whose gaps this
// snapshot was not built to carry: the scale test of the snapshot built
// for each holds what it reports at this size.
var scaledElsewhere = map[string]string{
	"containerd-chained-cni": "BenchmarkFoundingChecks (foundingSnapshot, no chained attachment)",
	"host-binary-glibc":      "BenchmarkFoundingChecks (foundingSnapshot)",
	"pod-sandbox-failures":   "TestWorkloadChecksScale",
	"version-skew":           "BenchmarkFoundingChecks (foundingSnapshot: a v1.33.4 API server, a tenth of the kubelets at v1.29.0)",
}

// TestRuntimeVersionsRBACChecksScale checks what these checks report at
// that size: lists capped, findings grouped rather than one per node.
func TestRuntimeVersionsRBACChecksScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-pod snapshot")
	}
	s := runtimeVersionsRBACSnapshot()
	imgs := runtimeVersionsImages(s)
	for _, area := range [][]check.Check{rbac.Checks(), runtime.Checks(), versions.Checks()} {
		for _, c := range area {
			if _, ok := scaledElsewhere[c.ID]; ok {
				continue
			}
			fs, err := c.Run(&check.Context{Snapshot: s, Images: imgs})
			if err != nil {
				t.Fatalf("%s: %v", c.ID, err)
			}
			if len(fs) == 0 && c.ID != "addon-rbac-gap" {
				t.Errorf("%s: no finding on a snapshot built to trigger it", c.ID)
			}
			for _, f := range fs {
				if len(f.Objects) > 60 || len(f.Evidence) > 60 {
					t.Errorf("%s: finding %q has %d objects and %d evidence lines", c.ID, f.Title, len(f.Objects), len(f.Evidence))
				}
			}
			if len(fs) > 1100 {
				t.Errorf("%s: %d findings", c.ID, len(fs))
			}
		}
	}
}
