package snapshot

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

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

// Templates share equal trimmed containers, and only equal ones: a
// container with a preStop hook and one without encode alike (PreStopKept
// is {} to omitempty), yet must not share, or the one without would read
// as having a hook.
func TestWorkloadsShareOnlyEqualContainers(t *testing.T) {
	var in interner
	deploy := func(preStop bool) appsv1.Deployment {
		d := appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns"}}
		c := corev1.Container{Name: "c", Image: "i"}
		if preStop {
			c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sleep", "5"}}}}
		}
		d.Spec.Template.Spec.Containers = []corev1.Container{c}
		trimWorkloadTemplate(&d.Spec.Template, &in)
		return d
	}
	hook, noHook, hook2, noHook2 := deploy(true), deploy(false), deploy(true), deploy(false)
	for _, tc := range []struct {
		name string
		a, b appsv1.Deployment
	}{{"with a preStop hook", hook, hook2}, {"without one", noHook, noHook2}} {
		if &tc.a.Spec.Template.Spec.Containers[0] != &tc.b.Spec.Template.Spec.Containers[0] {
			t.Errorf("equal containers %s are not shared", tc.name)
		}
	}
	if got := noHook2.Spec.Template.Spec.Containers[0].Lifecycle; got != nil {
		t.Errorf("a container without a preStop hook reads as having one: lifecycle %+v", got)
	}
	if got := hook2.Spec.Template.Spec.Containers[0].Lifecycle; got != PreStopKept {
		t.Errorf("a container with a preStop hook has lifecycle %+v, want PreStopKept", got)
	}
}

// The key podSpec builds names every field of SharedPodSpec: a field added
// and left out of the key would make pods that differ in it share one spec.
func TestPodSpecKeyCoversSharedPodSpec(t *testing.T) {
	var got []string
	for f := range reflect.TypeOf(SharedPodSpec{}).Fields() {
		got = append(got, f.Name)
	}
	want := []string{"ServiceAccountName", "PriorityClassName", "Priority", "HostNetwork", "LocalStorage",
		"InitContainers", "Containers", "EphemeralContainers", "Volumes"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SharedPodSpec has fields %v; podSpec's key covers %v: add the new ones to it", got, want)
	}
}

// Pods of one template share one spec; a pod that differs in any field of
// it, or has ephemeral containers, holds its own, equal to its input.
func TestPodsShareOnlyEqualSpecs(t *testing.T) {
	var in interner
	keep := func(name string, change func(*corev1.PodSpec)) Pod {
		p := fullPod(name)
		p.Annotations = nil
		change(&p.Spec)
		return keepPod(&p, &in)
	}
	same := func(*corev1.PodSpec) {}
	a, b := keep("a", same), keep("b", func(s *corev1.PodSpec) { s.NodeName = "node-2" })
	if a.Spec.SharedPodSpec != b.Spec.SharedPodSpec {
		t.Error("two pods of one template on two nodes do not share their spec")
	}
	if a.Spec.NodeName != "node-1" || b.Spec.NodeName != "node-2" {
		t.Errorf("node names %q, %q; want node-1, node-2", a.Spec.NodeName, b.Spec.NodeName)
	}
	prio := int32(7)
	dir := corev1.HostPathDirectory
	for _, c := range []struct {
		name   string
		change func(*corev1.PodSpec)
		holds  func(*PodSpec) bool
	}{
		{"service account", func(s *corev1.PodSpec) { s.ServiceAccountName = "other" }, func(s *PodSpec) bool { return s.ServiceAccountName == "other" }},
		{"priority class", func(s *corev1.PodSpec) { s.PriorityClassName = "low" }, func(s *PodSpec) bool { return s.PriorityClassName == "low" }},
		{"priority", func(s *corev1.PodSpec) { s.Priority = &prio }, func(s *PodSpec) bool { return s.Priority != nil && *s.Priority == 7 }},
		{"host network", func(s *corev1.PodSpec) { s.HostNetwork = false }, func(s *PodSpec) bool { return !s.HostNetwork }},
		{"local storage", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}, func(s *PodSpec) bool { return s.LocalStorage }},
		{"init image", func(s *corev1.PodSpec) { s.InitContainers[0].Image = "busybox:2" }, func(s *PodSpec) bool { return s.InitContainers[0].Image == "busybox:2" }},
		{"image", func(s *corev1.PodSpec) { s.Containers[0].Image = "nginx:2" }, func(s *PodSpec) bool { return s.Containers[0].Image == "nginx:2" }},
		{"host path", func(s *corev1.PodSpec) { s.Volumes[0].HostPath.Path = "/etc/cni" }, func(s *PodSpec) bool { return s.Volumes[0].Path == "/etc/cni" }},
		{"host path type", func(s *corev1.PodSpec) { s.Volumes[0].HostPath.Type = &dir }, func(s *PodSpec) bool { return s.Volumes[0].Type != nil && *s.Volumes[0].Type == dir }},
		{"ephemeral container", func(s *corev1.PodSpec) {
			s.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Name: "debug", Image: "busybox"}}}
		}, func(s *PodSpec) bool { return len(s.EphemeralContainers) == 1 }},
	} {
		p := keep(c.name, c.change)
		if p.Spec.SharedPodSpec == a.Spec.SharedPodSpec {
			t.Errorf("a pod differing in %s shares the template's spec", c.name)
		}
		if !c.holds(&p.Spec) {
			t.Errorf("a pod differing in %s does not hold its own value: %+v", c.name, *p.Spec.SharedPodSpec)
		}
		if again := keep(c.name+"-2", c.change); c.name != "ephemeral container" && again.Spec.SharedPodSpec != p.Spec.SharedPodSpec {
			t.Errorf("two pods equal in %s do not share their spec", c.name)
		}
	}
	if !a.Spec.HostNetwork || a.Spec.Containers[0].Image != "nginx:1" || len(a.Spec.Volumes) != 1 || a.Spec.Volumes[0].Type != nil {
		t.Errorf("the template's spec changed: %+v", *a.Spec.SharedPodSpec)
	}
}

// Pods whose statuses hold no reason, message, nominated node, init or
// ephemeral container statuses share one empty uncommon part; a pod with
// any of them holds its own.
func TestUncommonPodStatusSharedOnlyWhenEmpty(t *testing.T) {
	var in interner
	keep := func(name string, change func(*corev1.PodStatus)) Pod {
		p := fullPod(name)
		change(&p.Status)
		return keepPod(&p, &in)
	}
	plain := keep("a", func(*corev1.PodStatus) {})
	if plain.Status.UncommonPodStatus != noUncommonPodStatus {
		t.Errorf("a pod without uncommon status fields holds %+v of its own", *plain.Status.UncommonPodStatus)
	}
	for _, c := range []struct {
		name   string
		change func(*corev1.PodStatus)
		holds  func(*PodStatus) bool
	}{
		{"reason", func(s *corev1.PodStatus) { s.Reason = "Evicted" }, func(s *PodStatus) bool { return s.Reason == "Evicted" }},
		{"message", func(s *corev1.PodStatus) { s.Message = "low on memory" }, func(s *PodStatus) bool { return s.Message == "low on memory" }},
		{"nominated node", func(s *corev1.PodStatus) { s.NominatedNodeName = "node-9" }, func(s *PodStatus) bool { return s.NominatedNodeName == "node-9" }},
		{"init statuses", func(s *corev1.PodStatus) {
			s.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", RestartCount: 3}}
		},
			func(s *PodStatus) bool {
				return len(s.InitContainerStatuses) == 1 && s.InitContainerStatuses[0].RestartCount == 3
			}},
		{"ephemeral statuses", func(s *corev1.PodStatus) { s.EphemeralContainerStatuses = []corev1.ContainerStatus{{Name: "debug"}} },
			func(s *PodStatus) bool { return len(s.EphemeralContainerStatuses) == 1 }},
	} {
		p := keep(c.name, c.change)
		if p.Status.UncommonPodStatus == noUncommonPodStatus || !c.holds(&p.Status) {
			t.Errorf("a pod with %s does not hold it: %+v", c.name, *p.Status.UncommonPodStatus)
		}
	}
	if !reflect.DeepEqual(*noUncommonPodStatus, UncommonPodStatus{}) || !reflect.DeepEqual(*emptySharedPodSpec, SharedPodSpec{}) {
		t.Error("a shared empty part was written to")
	}
}

// The key podMeta builds names every field of SharedPodMeta but the two a
// pod being deleted keeps as its own (its deletion time and finalizers): a
// field added and left out of the key would make pods that differ in it
// share one.
func TestPodMetaKeyCoversSharedPodMeta(t *testing.T) {
	var got []string
	for f := range reflect.TypeOf(SharedPodMeta{}).Fields() {
		got = append(got, f.Name)
	}
	want := []string{"Namespace", "Labels", "Annotations", "OwnerReferences", "DeletionTimestamp", "Finalizers"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SharedPodMeta has fields %v; podMeta's key covers %v: add the new ones to it", got, want)
	}
}

// Pods of one owner share their metadata; a pod that differs in
// namespace, labels, kept annotations or owner, or is being deleted, holds
// its own, equal to its input.
func TestPodsShareOnlyEqualMeta(t *testing.T) {
	var in interner
	keep := func(name string, change func(*metav1.ObjectMeta)) Pod {
		p := fullPod(name)
		p.Annotations = nil
		change(&p.ObjectMeta)
		return keepPod(&p, &in)
	}
	same := func(*metav1.ObjectMeta) {}
	a, b := keep("a", same), keep("b", same)
	if a.SharedPodMeta != b.SharedPodMeta {
		t.Error("two pods of one owner do not share their metadata")
	}
	if a.Name != "a" || b.Name != "b" || a.UID == b.UID {
		t.Errorf("names %q, %q and UIDs %q, %q: each pod's own", a.Name, b.Name, a.UID, b.UID)
	}
	now := metav1.Now()
	for _, c := range []struct {
		name   string
		change func(*metav1.ObjectMeta)
		holds  func(*Pod) bool
	}{
		{"namespace", func(m *metav1.ObjectMeta) { m.Namespace = "team-b" }, func(p *Pod) bool { return p.Namespace == "team-b" }},
		{"labels", func(m *metav1.ObjectMeta) { m.Labels = map[string]string{"app": "api"} }, func(p *Pod) bool { return p.Labels["app"] == "api" && len(p.Labels) == 1 }},
		{"kept annotation", func(m *metav1.ObjectMeta) { m.Annotations = map[string]string{"kubernetes.io/config.mirror": "y"} },
			func(p *Pod) bool { return p.Annotations["kubernetes.io/config.mirror"] == "y" }},
		{"owner", func(m *metav1.ObjectMeta) { m.OwnerReferences[0].Name = "web-def" }, func(p *Pod) bool { return p.OwnerReferences[0].Name == "web-def" }},
		{"deletion", func(m *metav1.ObjectMeta) { m.DeletionTimestamp = &now },
			func(p *Pod) bool { return p.DeletionTimestamp != nil && reflect.DeepEqual(p.Finalizers, []string{"x"}) }},
	} {
		p := keep(c.name, c.change)
		if p.SharedPodMeta == a.SharedPodMeta {
			t.Errorf("a pod differing in %s shares the owner's metadata", c.name)
		}
		if !c.holds(&p) {
			t.Errorf("a pod differing in %s does not hold its own value: %+v", c.name, *p.SharedPodMeta)
		}
		if again := keep(c.name+"-2", c.change); c.name != "deletion" && again.SharedPodMeta != p.SharedPodMeta {
			t.Errorf("two pods equal in %s do not share their metadata", c.name)
		}
	}
	if a.Namespace != "team-a" || a.Labels["app"] != "web" || a.Annotations != nil || a.OwnerReferences[0].Name != "web-abc" ||
		a.DeletionTimestamp != nil || a.Finalizers != nil {
		t.Errorf("the owner's metadata changed: %+v", *a.SharedPodMeta)
	}
	if !reflect.DeepEqual(*emptySharedPodMeta, SharedPodMeta{}) {
		t.Error("the shared empty metadata was written to")
	}
}

// The key containerStatuses builds names every field of ContainerStatus.
func TestContainerStatusesKeyCoversContainerStatus(t *testing.T) {
	var got []string
	for f := range reflect.TypeOf(ContainerStatus{}).Fields() {
		got = append(got, f.Name)
	}
	want := []string{"Name", "Image", "ImageID", "Started", "RestartCount", "Ready", "State", "LastTerminationState"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ContainerStatus has fields %v; containerStatuses' key covers %v: add the new ones to it", got, want)
	}
}

// Healthy pods of one template share their container statuses; a pod
// whose statuses differ in any kept field, or that has a waiting or
// terminated container, holds its own, equal to its input.
func TestPodsShareOnlyEqualRunningStatuses(t *testing.T) {
	var in interner
	yes, no := true, false
	keep := func(name string, change func(*corev1.ContainerStatus)) Pod {
		p := fullPod(name)
		c := corev1.ContainerStatus{Name: "web", Image: "nginx:1", ImageID: "nginx@sha256:1", ContainerID: "containerd://" + name,
			Ready: true, Started: &yes, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}}
		change(&c)
		p.Status.ContainerStatuses = []corev1.ContainerStatus{c}
		return keepPod(&p, &in)
	}
	same := func(*corev1.ContainerStatus) {}
	a, b := keep("a", same), keep("b", same)
	if &a.Status.ContainerStatuses[0] != &b.Status.ContainerStatuses[0] {
		t.Error("two running pods of one template do not share their container statuses")
	}
	for _, c := range []struct {
		name   string
		change func(*corev1.ContainerStatus)
		holds  func(ContainerStatus) bool
		shares bool
	}{
		{"name", func(c *corev1.ContainerStatus) { c.Name = "api" }, func(c ContainerStatus) bool { return c.Name == "api" }, true},
		{"image", func(c *corev1.ContainerStatus) { c.Image = "nginx:2" }, func(c ContainerStatus) bool { return c.Image == "nginx:2" }, true},
		{"image ID", func(c *corev1.ContainerStatus) { c.ImageID = "nginx@sha256:2" }, func(c ContainerStatus) bool { return c.ImageID == "nginx@sha256:2" }, true},
		{"started", func(c *corev1.ContainerStatus) { c.Started = &no }, func(c ContainerStatus) bool { return c.Started != nil && !*c.Started }, true},
		{"no started", func(c *corev1.ContainerStatus) { c.Started = nil }, func(c ContainerStatus) bool { return c.Started == nil }, true},
		{"restarts", func(c *corev1.ContainerStatus) { c.RestartCount = 3 }, func(c ContainerStatus) bool { return c.RestartCount == 3 }, true},
		{"ready", func(c *corev1.ContainerStatus) { c.Ready = false }, func(c ContainerStatus) bool { return !c.Ready }, true},
		{"not running", func(c *corev1.ContainerStatus) { c.State.Running = nil }, func(c ContainerStatus) bool { return c.State.Running == nil }, true},
		{"ran before", func(c *corev1.ContainerStatus) { c.LastTerminationState.Running = &corev1.ContainerStateRunning{} },
			func(c ContainerStatus) bool { return c.LastTerminationState.Running != nil }, true},
		{"waiting", func(c *corev1.ContainerStatus) {
			c.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
		}, func(c ContainerStatus) bool {
			return c.State.Waiting != nil && c.State.Waiting.Reason == "CrashLoopBackOff"
		}, false},
		{"terminated before", func(c *corev1.ContainerStatus) {
			c.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled"}
		}, func(c ContainerStatus) bool {
			return c.LastTerminationState.Terminated != nil && c.LastTerminationState.Terminated.ExitCode == 137
		}, false},
	} {
		p := keep(c.name, c.change)
		got := p.Status.ContainerStatuses[0]
		if &p.Status.ContainerStatuses[0] == &a.Status.ContainerStatuses[0] || !c.holds(got) {
			t.Errorf("a pod differing in %s shares the template's statuses or does not hold its own: %+v", c.name, got)
		}
		again := keep(c.name+"-2", c.change)
		if shared := &again.Status.ContainerStatuses[0] == &p.Status.ContainerStatuses[0]; shared != c.shares {
			t.Errorf("two pods equal in %s: sharing their statuses is %v, want %v", c.name, shared, c.shares)
		}
	}
	if s := a.Status.ContainerStatuses[0]; s.Name != "web" || s.RestartCount != 0 || !s.Ready || s.State.Running == nil {
		t.Errorf("the template's statuses changed: %+v", s)
	}
}

// sameRunningStatus, which guards containerStatuses against a hash that
// collides, tells apart statuses that differ in any field the key names.
func TestSameRunningStatusComparesEveryKeyField(t *testing.T) {
	yes, no := true, false
	base := ContainerStatus{Name: "web", Image: "nginx:1", ImageID: "nginx@sha256:1", Started: &yes, Ready: true,
		State: corev1.ContainerState{Running: running}}
	if !sameRunningStatus(base, base) {
		t.Fatal("a status differs from itself")
	}
	for name, change := range map[string]func(*ContainerStatus){
		"name":        func(c *ContainerStatus) { c.Name = "api" },
		"image":       func(c *ContainerStatus) { c.Image = "nginx:2" },
		"image ID":    func(c *ContainerStatus) { c.ImageID = "nginx@sha256:2" },
		"started":     func(c *ContainerStatus) { c.Started = &no },
		"no started":  func(c *ContainerStatus) { c.Started = nil },
		"restarts":    func(c *ContainerStatus) { c.RestartCount = 1 },
		"ready":       func(c *ContainerStatus) { c.Ready = false },
		"not running": func(c *ContainerStatus) { c.State.Running = nil },
		"ran before":  func(c *ContainerStatus) { c.LastTerminationState.Running = running },
	} {
		other := base
		change(&other)
		if sameRunningStatus(base, other) || sameRunningStatus(other, base) {
			t.Errorf("statuses differing in %s compare equal", name)
		}
	}
}

// keep copies strings into shared chunks: each copy reads as its original,
// whether it fits a chunk's rest, needs a new chunk or is too long for one.
func TestKeepCopiesIntoChunks(t *testing.T) {
	var in interner
	long := strings.Repeat("x", textChunk)
	var kept []string
	var want []string
	for i := range 3000 {
		s := fmt.Sprintf("pod-%d-%s", i, strings.Repeat("y", i%40))
		want = append(want, s)
		kept = append(kept, in.keep(s))
	}
	want, kept = append(want, long, ""), append(kept, in.keep(long), in.keep(""))
	for i := range want {
		if kept[i] != want[i] {
			t.Fatalf("kept string %d reads %.40q, want %.40q", i, kept[i], want[i])
		}
	}
	if a, b := unsafe.StringData(kept[0]), unsafe.StringData(kept[1]); uintptr(unsafe.Pointer(b))-uintptr(unsafe.Pointer(a)) != uintptr(len(kept[0])) {
		t.Error("consecutive short strings are not copied side by side into one chunk")
	}
}

// A slab's slices are capped at their length: appending to one copies it
// and leaves the next one cut from the chunk as it was.
func TestSlabSlicesAreCapped(t *testing.T) {
	var s slab[PodCondition]
	a := s.clone([]PodCondition{{Type: "Ready"}})
	b := s.clone([]PodCondition{{Type: "PodScheduled"}, {Type: "Initialized"}})
	a = append(a, PodCondition{Type: "ContainersReady"})
	if b[0].Type != "PodScheduled" || b[1].Type != "Initialized" || a[0].Type != "Ready" || a[1].Type != "ContainersReady" {
		t.Errorf("appending to one slab slice changed another: a=%v b=%v", a, b)
	}
	if s.clone(nil) != nil {
		t.Error("an empty slice cloned is not nil")
	}
}

// Image IDs are shared per image: a container with the ID an earlier one
// of its image had gets that string; a different ID its own copy, right
// even past the few remembered.
func TestImageIDSharedPerImage(t *testing.T) {
	var in interner
	img := in.str("registry.example/app:1")
	first := in.imageID(img, "registry.example/app@sha256:aa")
	if again := in.imageID(img, strings.Clone("registry.example/app@sha256:aa")); unsafe.StringData(again) != unsafe.StringData(first) {
		t.Error("the same image ID of the same image is not shared")
	}
	for i := range imageIDsPerImage + 2 {
		id := fmt.Sprintf("registry.example/app@sha256:%02d", i)
		if got := in.imageID(img, id); got != id {
			t.Errorf("image ID %q kept as %q", id, got)
		}
	}
	if got := in.imageID(img, ""); got != "" {
		t.Errorf("no image ID kept as %q", got)
	}
	if n := len(in.imageIDs[img]); n != imageIDsPerImage {
		t.Errorf("%d image IDs remembered for one image, want at most %d", n, imageIDsPerImage)
	}
}
