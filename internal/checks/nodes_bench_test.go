package checks_test

import (
	"fmt"
	"maps"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// withNodeGaps adds to areaSnapshot the gaps of the node checks: nodes in
// ten pools, the last pool's disks a fifth of the others' and some under
// DiskPressure; a CSINode per node with a 16-volume limit and every tenth
// node full; FailedScheduling events for the volume count; the
// descheduler's chart-default policy with nodes cordoned; and
// cluster-autoscaler's status giving one pool a minimum of 0; and 200
// Pending pods every node refused for memory.
func withNodeGaps(s *snapshot.Snapshot) *snapshot.Snapshot {
	limit := int32(16)
	for i := range s.Nodes {
		n := &s.Nodes[i]
		pool := fmt.Sprintf("pool-%d", i%10)
		n.Labels["eks.amazonaws.com/nodegroup"] = pool
		n.Labels["node.kubernetes.io/instance-type"] = "m6i.xlarge"
		disk := "100Gi"
		if i%10 == 9 {
			disk = "20Gi"
			n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeDiskPressure, Status: corev1.ConditionTrue})
		}
		n.Status.Capacity = maps.Clone(n.Status.Capacity) // loaded nodes share equal lists
		n.Status.Capacity[corev1.ResourceEphemeralStorage] = resource.MustParse(disk)
		n.Spec.Unschedulable = i%50 == 0
		vols := 4
		if i%10 == 0 {
			vols = 16
		}
		for v := range vols {
			name := corev1.UniqueVolumeName(fmt.Sprintf("kubernetes.io/csi/ebs.csi.aws.com^vol-%d-%d", i, v))
			n.Status.VolumesAttached = append(n.Status.VolumesAttached, corev1.AttachedVolume{Name: name})
			n.Status.VolumesInUse = append(n.Status.VolumesInUse, name)
		}
		s.CSINodes = append(s.CSINodes, storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: n.Name},
			Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{{Name: "ebs.csi.aws.com", NodeID: n.Name,
				Allocatable: &storagev1.VolumeNodeResources{Count: &limit}}}}})
	}
	for i := range 2000 {
		s.Events = append(s.Events, corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e-%d", i), Namespace: "db"},
			Type: corev1.EventTypeWarning, Reason: "FailedScheduling",
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "db", Name: fmt.Sprintf("db-%d", i)},
			Message:        "0/5000 nodes are available: 500 node(s) exceed max volume count, 4500 Insufficient cpu."})
	}
	// Pods of a web Deployment Pending because every node is full.
	s.ReplicaSets = append(s.ReplicaSets, appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-x", Namespace: "web", UID: "rs-web"}})
	for r := range 200 {
		s.Pods = append(s.Pods, snapshot.Pod{Name: fmt.Sprintf("web-x-%d", r), UID: snapshot.MakePodUID(types.UID(fmt.Sprintf("web-%d", r))), SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "web"},
			Status: snapshot.PodStatus{Phase: corev1.PodPending, Conditions: []snapshot.PodCondition{{Type: corev1.PodScheduled,
				Status: corev1.ConditionFalse, Reason: "Unschedulable", Message: "0/5000 nodes are available: 5000 Insufficient memory."}}}})
	}
	// A hub whose every pod is in pool-3, the pool with a minimum of 0.
	ctrl := true
	s.ReplicaSets = append(s.ReplicaSets, appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "hub-x", Namespace: "hub", UID: "rs-hub",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "hub", UID: "dep-hub", Controller: &ctrl}}}})
	for r := range 3 {
		s.Pods = append(s.Pods, snapshot.Pod{Name: fmt.Sprintf("hub-x-%d", r), UID: snapshot.MakePodUID(types.UID(fmt.Sprintf("hub-%d", r))),
			SharedPodMeta: &snapshot.SharedPodMeta{Namespace: "hub",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "hub-x", UID: "rs-hub", Controller: &ctrl}}},
			Spec: snapshot.PodSpec{NodeName: fmt.Sprintf("node-%04d", 3+10*r)}, Status: snapshot.PodStatus{Phase: corev1.PodRunning}})
	}
	s.ConfigMaps = append(s.ConfigMaps,
		corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "descheduler", Namespace: "kube-system"}, Data: map[string]string{
			"policy.yaml": "profiles:\n- name: default\n  plugins:\n    deschedule:\n      enabled: [RemovePodsViolatingNodeTaints]\n"}},
		corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cluster-autoscaler-status", Namespace: "kube-system"}, Data: map[string]string{
			"status": "nodeGroups:\n- name: eks-pool-3-1a2b\n  health: {minSize: 0, maxSize: 900}\n- name: eks-pool-4-3c4d\n  health: {minSize: 3, maxSize: 900}\n"}})
	return s
}

// nodeBenchChecks are the checks BenchmarkNodeChecks times.
var nodeBenchChecks = checks.BenchIDs("BenchmarkNodeChecks", "node-disk-drift", "attach-limit", "descheduler-evicts-cordoned", "pool-scales-to-zero", "pending-no-room")

// BenchmarkNodeChecks times the node and autoscaling checks of issue 14
// at 5,000 nodes and 100,000 pods (each must stay under 0.5 s):
// go test -run NONE -bench NodeChecks ./internal/checks/
func BenchmarkNodeChecks(b *testing.B) {
	benchEach(b, withNodeGaps(areaSnapshot()), nodeBenchChecks, 1)
}
