package check

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDaemonSetPlacement(t *testing.T) {
	node := func(name string, lbl map[string]string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbl}, Spec: corev1.NodeSpec{Taints: taints}}
	}
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	nodes := []corev1.Node{
		node("cpu-1", map[string]string{"kubernetes.io/os": "linux"}),
		node("cpu-2", map[string]string{"kubernetes.io/os": "linux"},
			corev1.Taint{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}),
		node("gpu-1", map[string]string{"kubernetes.io/os": "linux", "nvidia.com/gpu.present": "true"}, gpuTaint),
		node("win-1", map[string]string{"kubernetes.io/os": "windows"}),
	}
	gpuAffinity := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: "nvidia.com/gpu.present", Operator: corev1.NodeSelectorOpIn, Values: []string{"true"}}}}}}}}
	byName := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"win-1"}}}}}}}}
	emptyTerm := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}}}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want []string
	}{
		// The DaemonSet controller's own tolerations cover cordoned nodes.
		{"everywhere but untolerated taints", corev1.PodSpec{}, []string{"cpu-1", "cpu-2", "win-1"}},
		{"nodeSelector", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}, []string{"cpu-1", "cpu-2"}},
		{"GPU affinity without toleration", corev1.PodSpec{Affinity: gpuAffinity}, nil},
		{"GPU affinity and toleration", corev1.PodSpec{Affinity: gpuAffinity,
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}}, []string{"gpu-1"}},
		{"matchFields on the name", corev1.PodSpec{Affinity: byName}, []string{"win-1"}},
		{"an empty term matches nothing", corev1.PodSpec{Affinity: emptyTerm}, nil},
	} {
		ds := &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{Template: corev1.PodTemplateSpec{Spec: tc.spec}}}
		p := DaemonSetPlacement(ds)
		var got []string
		for _, n := range p.Nodes(nodes) {
			got = append(got, n.Name)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// Taints aside, the GPU template selects the GPU node.
	p := PodSpecPlacement(&corev1.PodSpec{Affinity: gpuAffinity})
	if !p.MatchesSelection(&nodes[2]) || p.MatchesSelection(&nodes[0]) {
		t.Error("MatchesSelection does not follow the required affinity")
	}
}
