package scheduling

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestPendingNoRoom: a pod every node refused for memory, with nothing to
// add nodes, is high and names its Deployment, citing the DFDS case as
// detected; with cluster-autoscaler present it is medium; once nodes are
// added nothing is reported.
func TestPendingNoRoom(t *testing.T) {
	c := pendingNoRoomCheck()
	if r, ok := c.Relation(caseDFDSReserved); !ok || r != check.RelDetects {
		t.Fatalf("the check links %s as %q (cited %v), want detects", caseDFDSReserved, r, ok)
	}
	s := checktest.Complete(checktest.Load(t, "pending-no-room/dfds-after-reserved.yaml"))
	fs, _, _ := checktest.Run(t, c, s)
	if len(fs) != 1 || fs[0].Severity != finding.High || !slices.Contains(fs[0].Cases, caseDFDSReserved) ||
		!checktest.HasObject(fs, "Deployment", "customer-team", "orders") {
		t.Fatalf("findings %+v, want one high finding naming Deployment customer-team/orders", fs)
	}
	s.Deployments = append(s.Deployments, appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "cluster-autoscaler", Namespace: "kube-system"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "cluster-autoscaler", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.0"}}}}}})
	fs, _, _ = checktest.Run(t, c, s)
	if len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("with cluster-autoscaler: findings %+v, want one medium", fs)
	}
	checktest.Quiet(t, c, checktest.Complete(checktest.Load(t, "pending-no-room/nodes-added.yaml")))
}

// TestPendingNoRoomOtherReasons: a verdict naming a reason other than
// room, selection or taints (a cordoned node) is not this rule's.
func TestPendingNoRoomOtherReasons(t *testing.T) {
	s := checktest.Load(t, "pending-no-room/dfds-after-reserved.yaml")
	for i := range s.Pods {
		for j := range s.Pods[i].Status.Conditions {
			if s.Pods[i].Status.Conditions[j].Type == corev1.PodScheduled {
				s.Pods[i].Status.Conditions[j].Message = "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient memory."
			}
		}
	}
	if fs, _, _ := checktest.Run(t, pendingNoRoomCheck(), s); len(fs) != 0 {
		t.Errorf("findings %+v: a cordoned node is not a full one", fs)
	}
}
