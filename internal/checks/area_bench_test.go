package checks_test

import (
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// areaBenchChecks are the area checks the benchmark below times.
var areaBenchChecks = checks.BenchIDs("BenchmarkBatchDChecks",
	"registry-risk", "cronjob-pileup", "ingress-class-binding", "probe-cascade", "hpa-metric-source", "hpa-replicas-applied",
	"in-tree-volume-migration", "pv-zone-schedulability", "node-reservation-insufficient", "cpu-limit-cfs-kernel",
)

// areaSnapshot is a cluster of 5,000 nodes in three zones and 100,000
// pods: 1,000 Deployments of 100 pods (probes, requests, an HPA each), 20
// DaemonSets on every node, 500 CronJobs with 6 Jobs each, 2,000
// Ingresses, 10,000 zonal volumes and the classes, drivers and
// APIServices around them.
func areaSnapshot() *snapshot.Snapshot {
	const (
		nodes, deploys, perDeploy, daemonSets = 5000, 1000, 100, 20
	)
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceFiles, ServerVersion: "v1.33.4"})
	zones := []string{"eu-west-1a", "eu-west-1b", "eu-west-1c"}
	ctrl := true
	for i := range nodes {
		z := zones[i%3]
		s.Nodes = append(s.Nodes, corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i), Labels: map[string]string{
				"topology.kubernetes.io/zone": z, "topology.ebs.csi.aws.com/zone": z}},
			Status: corev1.NodeStatus{
				Capacity:    corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourceCPU: resource.MustParse("4")},
				Allocatable: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("15Gi"), corev1.ResourceCPU: resource.MustParse("3900m")},
				Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
				NodeInfo:    corev1.NodeSystemInfo{KernelVersion: "6.1.0-1234-aws", OSImage: "Ubuntu 22.04.5 LTS"}}})
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "curl -fsS http://localhost:8080/healthz"}}}, TimeoutSeconds: 3}
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}}
	var pods []snapshot.Pod
	n := 0
	for d := range deploys {
		ns := fmt.Sprintf("ns-%03d", d%200)
		app := fmt.Sprintf("app-%04d", d)
		replicas := int32(perDeploy)
		duid, ruid := types.UID("dep-"+app), types.UID("rs-"+app)
		s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, UID: duid},
			Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "c", Image: "quay.io/acme/" + app + ":1.0", Resources: res, LivenessProbe: probe, ReadinessProbe: probe}}}}}})
		s.ReplicaSets = append(s.ReplicaSets, appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-x", Namespace: ns, UID: ruid,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: app, UID: duid, Controller: &ctrl}}}})
		s.HorizontalPodAutoscalers = append(s.HorizontalPodAutoscalers, autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "Deployment", Name: app},
				MaxReplicas: 200, Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType,
					Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType}}}}}})
		for r := range perDeploy - daemonSets*nodes/(deploys*perDeploy) {
			pods = append(pods, snapshot.Pod{Name: fmt.Sprintf("%s-%d", app, r), UID: snapshot.MakePodUID(types.UID(fmt.Sprintf("p-%d", n))),
				SharedPodMeta: &snapshot.SharedPodMeta{Namespace: ns,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-x", UID: ruid, Controller: &ctrl}}},
				Spec: snapshot.PodSpec{NodeName: fmt.Sprintf("node-%04d", n%nodes), SharedPodSpec: &snapshot.SharedPodSpec{Containers: []snapshot.Container{{Name: "c",
					Image: "quay.io/acme/" + app + ":1.0", ImagePullPolicy: corev1.PullIfNotPresent,
					Resources: snapshot.Resources{CPURequest: 100, CPULimit: 500, MemoryRequest: 128 << 20}}}}},
				Status: snapshot.PodStatus{Phase: corev1.PodRunning}})
			n++
		}
	}
	for d := range daemonSets {
		name := fmt.Sprintf("agent-%02d", d)
		uid := types.UID("ds-" + name)
		s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", UID: uid},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "a", Image: "quay.io/acme/" + name + ":latest", LivenessProbe: probe}}}}}})
		for i := range nodes / 20 * 20 / daemonSets {
			pods = append(pods, snapshot.Pod{Name: fmt.Sprintf("%s-%d", name, i), UID: snapshot.MakePodUID(types.UID(fmt.Sprintf("p-%d", n))),
				SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "kube-system",
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: name, UID: uid, Controller: &ctrl}}},
				Spec: snapshot.PodSpec{NodeName: fmt.Sprintf("node-%04d", i), SharedPodSpec: &snapshot.SharedPodSpec{Containers: []snapshot.Container{{Name: "a",
					Image: "quay.io/acme/" + name + ":latest", ImagePullPolicy: corev1.PullAlways}}}},
				Status: snapshot.PodStatus{Phase: corev1.PodRunning}})
			n++
		}
	}
	s.Pods = pods
	for c := range 500 {
		name := fmt.Sprintf("cron-%03d", c)
		uid := types.UID("cj-" + name)
		s.CronJobs = append(s.CronJobs, batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "jobs", UID: uid},
			Spec: batchv1.CronJobSpec{Schedule: "*/5 * * * *"}})
		for j := range 6 {
			s.Jobs = append(s.Jobs, batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, j), Namespace: "jobs",
				OwnerReferences: []metav1.OwnerReference{{Kind: "CronJob", Name: name, UID: uid, Controller: &ctrl}}},
				Status: batchv1.JobStatus{Succeeded: 1}})
		}
	}
	nginx := "nginx"
	s.IngressClasses = []networkingv1.IngressClass{{ObjectMeta: metav1.ObjectMeta{Name: nginx}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}}
	for i := range 2000 {
		ing := networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ing-%04d", i), Namespace: fmt.Sprintf("ns-%03d", i%200)}}
		if i%2 == 0 {
			ing.Spec.IngressClassName = &nginx
		}
		s.Ingresses = append(s.Ingresses, ing)
	}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	s.StorageClasses = []storagev1.StorageClass{{ObjectMeta: metav1.ObjectMeta{Name: "gp3"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc},
		{ObjectMeta: metav1.ObjectMeta{Name: "gp2"}, Provisioner: "kubernetes.io/aws-ebs"}}
	s.CSIDrivers = []storagev1.CSIDriver{{ObjectMeta: metav1.ObjectMeta{Name: "ebs.csi.aws.com"}}}
	for i := range 10000 {
		s.PersistentVolumes = append(s.PersistentVolumes, corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%05d", i)},
			Spec: corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "db", Name: fmt.Sprintf("data-%d", i)},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "topology.ebs.csi.aws.com/zone", Operator: corev1.NodeSelectorOpIn,
						Values: []string{zones[i%3]}}}}}}}},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound}})
	}
	s.AddCustom(snapshot.APIServices, []unstructured.Unstructured{{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1beta1.metrics.k8s.io"},
		"spec":   map[string]any{"group": "metrics.k8s.io", "version": "v1beta1"},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Available", "status": "True"}}}}}})
	return s
}

// BenchmarkBatchDChecks times each area check of issue 14's batch D at
// 5,000 nodes and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench BatchDChecks ./internal/checks/
func BenchmarkBatchDChecks(b *testing.B) {
	s := areaSnapshot()
	if len(s.Pods) < 100000 || len(s.Nodes) != 5000 {
		b.Fatalf("%d pods on %d nodes, want 100,000 on 5,000", len(s.Pods), len(s.Nodes))
	}
	for _, id := range areaBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			continue // not in this build
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Run(&check.Context{Snapshot: s}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// upgradeBenchChecks are the checks BenchmarkUpgradeChecks times.
var upgradeBenchChecks = checks.BenchIDs("BenchmarkUpgradeChecks", "removed-apis", "upgrade-preflight", "addon-version-compat", "openshift-cgroup-v1",
	"deprecated-api-usage", "in-tree-cloud-provider")

// BenchmarkUpgradeChecks times removed-apis and the upgrade preflight
// (with a target one minor up) at 5,000 nodes and 100,000 pods:
// go test -run NONE -bench UpgradeChecks ./internal/checks/
func BenchmarkUpgradeChecks(b *testing.B) {
	s := areaSnapshot()
	s.Source.ServerVersion = "v1.34.2"
	target := check.KubeVersion{Major: 1, Minor: 35}
	// Add-ons the compatibility tables name at 1.35: Calico and Cilium
	// tested up to 1.29 and 1.30, a CoreDNS kubeadm deploys up to 1.31, and
	// a Rook operator that supports Kubernetes up to 1.32.
	s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image = "quay.io/calico/node:v3.27.3"
	s.DaemonSets[1].Spec.Template.Spec.Containers[0].Image = "quay.io/cilium/cilium:v1.16.5"
	s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "registry.k8s.io/coredns/coredns:v1.11.1"
	s.Deployments[1].Spec.Template.Spec.Containers[0].Image = "docker.io/rook/ceph:v1.16.4"
	// What /metrics counts on a busy cluster: a few deprecated versions.
	for _, r := range []string{"deviceclasses", "resourceclaims", "resourceclaimtemplates", "resourceslices"} {
		s.AddDeprecatedAPIRequests(snapshot.DeprecatedAPIRequest{Group: "resource.k8s.io", Version: "v1beta1", Resource: r,
			RemovedRelease: "1.38", Value: "1", From: "GET /metrics"})
	}
	for _, id := range upgradeBenchChecks {
		c, ok := checks.Lookup(id)
		if !ok {
			b.Fatalf("no check %s", id)
		}
		b.Run(id, func(b *testing.B) {
			defer checktest.CPUPerOp(b)()
			b.ReportAllocs()
			for b.Loop() {
				fs, err := c.Run(&check.Context{Snapshot: s, Target: &target})
				if err != nil {
					b.Fatal(err)
				}
				if id == "upgrade-preflight" && countTitled(fs, "is not tested on Kubernetes", "kubeadm deploys", "supports Kubernetes up to") != 4 {
					b.Fatalf("the add-on gaps were not found: %d findings", len(fs))
				}
			}
		})
	}
}

// countTitled counts the findings whose title contains one of parts.
func countTitled(fs []finding.Finding, parts ...string) int {
	n := 0
	for _, f := range fs {
		for _, p := range parts {
			if strings.Contains(f.Title, p) {
				n++
				break
			}
		}
	}
	return n
}
