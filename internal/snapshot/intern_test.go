package snapshot

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The key podContainers writes names every field of Container and of the
// mounts it keeps: a field added to either and left out of the key would
// make pods that differ in it share one slice. This test names the fields
// the key covers; adding one means adding it to the key.
func TestPodContainersKeyCoversContainer(t *testing.T) {
	fields := func(v any) []string {
		var out []string
		for f := range reflect.TypeOf(v).Fields() {
			out = append(out, f.Name)
		}
		return out
	}
	if got, want := fields(Container{}), []string{"Name", "Image", "ImagePullPolicy", "VolumeMounts", "Resources", "LivenessProbe", "Command", "Args"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Container has fields %v; podContainers' key covers %v: add the new ones to it", got, want)
	}
	if got, want := fields(Resources{}), []string{"CPURequest", "CPULimit", "MemoryRequest", "MemoryLimit"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Resources has fields %v; podContainers' key covers %v: add the new ones to it", got, want)
	}
}

// Pods with equal containers and owners share one slice of each; pods
// that differ in any kept field keep their own, equal to what they hold.
func TestPodsShareOnlyEqualContainersAndOwners(t *testing.T) {
	var in interner
	pod := func(name, limit, mount, owner string) Pod {
		p := fullPod(name)
		p.Annotations = nil // not a static pod: its probes are not kept
		p.OwnerReferences[0].Name = owner
		p.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse(limit)
		p.Spec.Containers[0].VolumeMounts[0].MountPath = mount
		return keepPod(&p, &in)
	}
	a := pod("a", "1Gi", "/host/opt/cni/bin", "web-abc")
	b := pod("b", "1Gi", "/host/opt/cni/bin", "web-abc")
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] || &a.OwnerReferences[0] != &b.OwnerReferences[0] {
		t.Error("two pods with equal containers and owners do not share them")
	}
	for _, c := range []struct {
		name string
		p    Pod
	}{
		{"memory limit", pod("c", "2Gi", "/host/opt/cni/bin", "web-abc")},
		{"mount path", pod("d", "1Gi", "/host/cni", "web-abc")},
	} {
		if &c.p.Spec.Containers[0] == &a.Spec.Containers[0] || reflect.DeepEqual(c.p.Spec.Containers, a.Spec.Containers) {
			t.Errorf("pods differing in %s share containers: %+v", c.name, c.p.Spec.Containers)
		}
	}
	if e := pod("e", "1Gi", "/host/opt/cni/bin", "web-def"); &e.OwnerReferences[0] == &a.OwnerReferences[0] || e.OwnerReferences[0].Name != "web-def" {
		t.Errorf("pods of different owners share owner references: %+v", e.OwnerReferences)
	}
	if got := b.Spec.Containers[0].Resources.MemoryLimit; got != 1<<30 {
		t.Errorf("shared container's memory limit %d, want 1Gi", got)
	}
}

// Workloads and nodes share equal resource lists, probes and selectors,
// and keep their own where they differ.
func TestWorkloadsShareOnlyEqualParts(t *testing.T) {
	var in interner
	deploy := func(cpu string, port int32, app string) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", Labels: map[string]string{"app": app}}}
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "c", Image: "i",
			Resources:      corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{}}, PeriodSeconds: port}}}
		trimWorkloadTemplate(&d.Spec.Template, &in)
		shareWorkload(&d.ObjectMeta, &d.Spec.Selector, &in)
		return d
	}
	a, b, c := deploy("100m", 10, "web"), deploy("100m", 10, "web"), deploy("200m", 20, "api")
	ca, cb, cc := a.Spec.Template.Spec.Containers[0], b.Spec.Template.Spec.Containers[0], c.Spec.Template.Spec.Containers[0]
	if ca.ReadinessProbe != cb.ReadinessProbe || a.Spec.Selector != b.Spec.Selector ||
		reflect.ValueOf(ca.Resources.Requests).UnsafePointer() != reflect.ValueOf(cb.Resources.Requests).UnsafePointer() {
		t.Error("equal probes, selectors or resource lists are not shared")
	}
	if ca.ReadinessProbe == cc.ReadinessProbe || cc.ReadinessProbe.PeriodSeconds != 20 ||
		a.Spec.Selector == c.Spec.Selector || c.Spec.Selector.MatchLabels["app"] != "api" || c.Labels["app"] != "api" {
		t.Errorf("different probes or selectors are shared: %+v %+v", cc.ReadinessProbe, c.Spec.Selector)
	}
	if q := cc.Resources.Requests[corev1.ResourceCPU]; q.MilliValue() != 200 {
		t.Errorf("cpu request %s, want 200m", q.String())
	}
}
