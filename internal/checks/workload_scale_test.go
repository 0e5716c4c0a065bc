package checks

import (
	"fmt"
	"testing"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const deploysInLarge = 1000

// largeSnapshot builds a cluster of 5,000 nodes and 100,000 pods: 1,000
// Deployments of 100 pods in 200 namespaces, each with a budget, 20
// DaemonSets on every node, 1% of pods stuck with a sandbox event, and 50
// webhooks with their Services and EndpointSlices.
func largeSnapshot() *snapshot.Snapshot {
	const (
		nodes      = 5000
		namespaces = 200
		deploys    = deploysInLarge
		perDeploy  = 100
	)
	s := snapshot.New(snapshot.Source{Type: snapshot.SourceFiles})
	isCtrl := true
	for i := range nodes {
		s.Nodes = append(s.Nodes, corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%04d", i)},
			Status: corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{OSImage: "Ubuntu 22.04.5 LTS"}}})
	}
	for i := range namespaces {
		s.Namespaces = append(s.Namespaces, corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ns-%03d", i),
			Labels: map[string]string{"kubernetes.io/metadata.name": fmt.Sprintf("ns-%03d", i)}}})
	}
	one := int32(perDeploy)
	pod := 0
	var pods []corev1.Pod
	for d := range deploys {
		ns := fmt.Sprintf("ns-%03d", d%namespaces)
		app := fmt.Sprintf("app-%04d", d)
		duid := types.UID("dep-" + app)
		ruid := types.UID("rs-" + app)
		s.Deployments = append(s.Deployments, appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, UID: duid},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.com/" + app + ":1.0"}}}}}})
		s.ReplicaSets = append(s.ReplicaSets, appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: app + "-x", Namespace: ns, UID: ruid,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Deployment", Name: app, UID: duid, Controller: &isCtrl}}}})
		mu := intstr.FromInt32(1)
		s.PodDisruptionBudgets = append(s.PodDisruptionBudgets, policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &mu,
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}})
		for r := range perDeploy {
			p := corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%03d", app, r), Namespace: ns, UID: types.UID(fmt.Sprintf("pod-%d", pod)),
					Labels:          map[string]string{"app": app},
					OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: app + "-x", UID: ruid, Controller: &isCtrl}}},
				Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%04d", pod%nodes),
					Containers: []corev1.Container{{Name: "c", Image: "example.com/" + app + ":1.0"}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
			}
			if pod%100 == 0 {
				p.Status = corev1.PodStatus{Phase: corev1.PodPending}
				s.Events = append(s.Events, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: p.Name + ".1", Namespace: ns},
					InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name, UID: p.UID},
					Reason:         "FailedCreatePodSandBox", Type: corev1.EventTypeWarning, // the kubelet's reason for a failed sandbox
					Message: `Failed to create pod sandbox: plugin type="azure-vnet" failed (add): /lib/x86_64-linux-gnu/libc.so.6: version ` +
						"`GLIBC_2.34' not found"})
			}
			pods = append(pods, p)
			pod++
		}
	}
	_, addPods, _ := snapshot.ListKind(snapshot.Pods)
	addPods(s, &corev1.PodList{Items: pods})
	for i := range 20 {
		s.DaemonSets = append(s.DaemonSets, appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("agent-%d", i), Namespace: "kube-system", UID: types.UID(fmt.Sprintf("ds-%d", i))},
			Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "a", Image: "acme/agent:latest"}}}}},
			Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: nodes}})
	}
	fail := admissionv1.Fail
	for i := range 50 {
		ns := fmt.Sprintf("ns-%03d", i)
		svc := fmt.Sprintf("hook-%d", i)
		s.ValidatingWebhookConfigurations = append(s.ValidatingWebhookConfigurations, admissionv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: svc},
			Webhooks: []admissionv1.ValidatingWebhook{{Name: svc + ".example.com", FailurePolicy: &fail,
				Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
					Rule: admissionv1.Rule{APIGroups: []string{""}, Resources: []string{"pods"}}}},
				ClientConfig: admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: svc}}}}})
		s.Services = append(s.Services, corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: svc, Namespace: ns},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": fmt.Sprintf("app-%04d", i)}}})
		s.EndpointSlices = append(s.EndpointSlices, discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Name: svc + "-x", Namespace: ns, Labels: map[string]string{"kubernetes.io/service-name": svc}},
			Endpoints:  []discoveryv1.Endpoint{{Addresses: []string{"10.0.0.1"}}, {Addresses: []string{"10.0.0.2"}}}})
	}
	for _, r := range snapshot.Known() {
		s.SetCoverage(r, snapshot.StatusRead, "")
	}
	s.Finish()
	return s
}

// TestWorkloadChecksScale runs the four workload checks on 5,000 nodes and
// 100,000 pods and checks what they report at that size: capped object and
// evidence lists, one finding per offending object. Their speed is measured
// by BenchmarkWorkloadChecks, not here.
func TestWorkloadChecksScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 100,000-pod snapshot")
	}
	s := largeSnapshot()
	for _, c := range workloadBenchChecks {
		fs, err := c.Run(&check.Context{Snapshot: s})
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		for _, f := range fs {
			if len(f.Objects) > 2*check.MaxListedObjects+10 || len(f.Evidence) > 2*check.MaxListedObjects+10 {
				t.Errorf("%s: finding %q has %d objects and %d evidence lines, not capped", c.ID, f.Title, len(f.Objects), len(f.Evidence))
			}
		}
		switch c.ID {
		case "pod-sandbox-failures":
			// 1,000 stuck pods with one signature: one finding, capped.
			if len(fs) != 1 {
				t.Errorf("pod-sandbox-failures: %d findings, want 1", len(fs))
			}
		case "image-pull-always":
			if len(fs) != 20 {
				t.Errorf("image-pull-always: %d findings, want 20 (one per DaemonSet)", len(fs))
			}
		case "pdb-blocks-drain":
			// Every budget selects 100 pods, one of them stuck Pending, and
			// allows one disruption: the stuck pod has used it up.
			if len(fs) != deploysInLarge {
				t.Errorf("pdb-blocks-drain: %d findings, want one per exhausted budget (%d)", len(fs), deploysInLarge)
			}
		}
	}
}

// workloadBenchChecks are the checks BenchmarkWorkloadChecks times (and
// the scale test checks).
var workloadBenchChecks = benchChecks("BenchmarkWorkloadChecks",
	lookupAll("pdb-blocks-drain", "pod-sandbox-failures", "image-pull-always", "webhook-blast-radius")...)

// BenchmarkWorkloadChecks times each workload check on 5,000 nodes and
// 100,000 pods: go test -run NONE -bench WorkloadChecks ./internal/checks/
func BenchmarkWorkloadChecks(b *testing.B) {
	s := largeSnapshot()
	for _, c := range workloadBenchChecks {
		b.Run(c.ID, func(b *testing.B) {
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
