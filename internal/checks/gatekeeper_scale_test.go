package checks

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// gatekeeperBench are the checks BenchmarkGatekeeperChecks times.
var gatekeeperBench = benchIDs("BenchmarkGatekeeperChecks", "gatekeeper-audit-oom")

// BenchmarkGatekeeperChecks times gatekeeper-audit-oom on 5,000 nodes and
// 100,000 pods with Gatekeeper's audit at the chart's 512Mi:
// go test -run NONE -bench GatekeeperChecks ./internal/checks/
func BenchmarkGatekeeperChecks(b *testing.B) {
	s := largeSnapshot()
	s.Deployments = append(s.Deployments, appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "gatekeeper-audit", Namespace: "gatekeeper-system"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "manager", Image: "openpolicyagent/gatekeeper:v3.14.0", Args: []string{"--operation=audit"},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")}}}}}}}})
	timeChecksOn(b, s, gatekeeperBench)
}
