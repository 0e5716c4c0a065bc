package snapshot

import (
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func fullPod(name string) corev1.Pod {
	tru := true
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "team-a", UID: types.UID("uid-" + name),
			Labels:          map[string]string{"app": "web", "pod-template-hash": "abc"},
			Annotations:     map[string]string{"kubernetes.io/config.mirror": "x", "prometheus.io/scrape": "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs", Controller: &tru}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet"}},
			ResourceVersion: "42", Finalizers: []string{"x"},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", HostNetwork: true, ServiceAccountName: "sa", PriorityClassName: "high",
			Containers: []corev1.Container{{
				Name: "web", Image: "nginx:1", ImagePullPolicy: corev1.PullAlways,
				Env:           []corev1.EnvVar{{Name: "TOKEN", Value: "s3cret"}, {Name: "IP", ValueFrom: &corev1.EnvVarSource{}}},
				Resources:     corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
				Ports:         []corev1.ContainerPort{{ContainerPort: 80}},
				Command:       []string{"/bin/web"},
				VolumeMounts:  []corev1.VolumeMount{{Name: "cni", MountPath: "/host/opt/cni/bin"}, {Name: "token", MountPath: "/var/run/secrets"}},
				LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}}},
			}},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox"}},
			Volumes: []corev1.Volume{
				{Name: "cni", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/opt/cni/bin"}}},
				{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}},
			},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: "10.0.0.1", PodIP: "10.1.0.1", QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, Message: "long"},
				{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", Message: "long"},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "web", Image: "nginx:1", ImageID: "nginx@sha256:1", ContainerID: "containerd://1", RestartCount: 7,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, ContainerID: "containerd://0"}},
			}},
		},
	}
}

func TestTrimPodKeepsWhatChecksRead(t *testing.T) {
	s := New(Source{})
	pods := []corev1.Pod{fullPod("a"), fullPod("b")}
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: pods})
	s.Finish()
	p := &s.Pods[0]

	checks := []struct {
		name string
		ok   bool
	}{
		{"name, namespace, uid", p.Name == "a" && p.Namespace == "team-a" && !p.UID.IsZero()},
		{"labels", p.Labels["app"] == "web" && len(p.Labels) == 2},
		{"kept annotation only", len(p.Annotations) == 1 && p.Annotations["kubernetes.io/config.mirror"] == "x"},
		{"owner", len(p.OwnerReferences) == 1 && p.OwnerReferences[0].Name == "web-abc" && *p.OwnerReferences[0].Controller},
		{"spec scalars", p.Spec.NodeName == "node-1" && p.Spec.HostNetwork && p.Spec.ServiceAccountName == "sa" && p.Spec.PriorityClassName == "high"},
		{"containers", len(p.Spec.Containers) == 1 && p.Spec.Containers[0].Image == "nginx:1" && p.Spec.Containers[0].ImagePullPolicy == corev1.PullAlways},
		{"resources as four numbers", p.Spec.Containers[0].Resources == Resources{CPULimit: 1000}},
		{"init containers", len(p.Spec.InitContainers) == 1 && p.Spec.InitContainers[0].Image == "busybox"},
		{"hostPath volume and its mount only", len(p.Spec.Volumes) == 1 && p.Spec.Volumes[0].Path == "/opt/cni/bin" &&
			len(p.Spec.Containers[0].VolumeMounts) == 1 && p.Spec.Containers[0].VolumeMounts[0].Name == "cni"},
		{"status", p.Status.Phase == corev1.PodRunning && p.Status.HostIP == "10.0.0.1" && p.Status.PodIP == "10.1.0.1"},
		{"Ready and failing conditions, no messages", len(p.Status.Conditions) == 1 && p.Status.Conditions[0].Type == corev1.PodReady &&
			p.Status.Conditions[0].Reason == "ContainersNotReady" && p.Status.Conditions[0].Message == ""},
		{"container status", len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == 7 &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "CrashLoopBackOff" && p.Status.ContainerStatuses[0].ImageID == "nginx@sha256:1"},
		{"no container IDs", p.Status.ContainerStatuses[0].LastTerminationState.Terminated.ContainerID == "" &&
			p.Status.ContainerStatuses[0].LastTerminationState.Terminated.ExitCode == 1},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: not as expected in %+v", c.name, *p)
		}
	}
	// Written back as an API object: what was kept, and nothing else.
	o := p.Object()
	if o.Kind != "Pod" || o.APIVersion != "v1" || o.ManagedFields != nil || o.Finalizers != nil || o.ResourceVersion != "" ||
		o.Spec.Containers[0].Env != nil || o.Spec.Containers[0].Resources.Limits.Cpu().String() != "1" || o.Spec.Containers[0].LivenessProbe != nil ||
		o.Spec.Tolerations != nil || o.Spec.Volumes[0].HostPath.Path != "/opt/cni/bin" || o.Status.ContainerStatuses[0].ContainerID != "" ||
		o.Status.ContainerStatuses[0].RestartCount != 7 || o.Labels["app"] != "web" || o.Annotations["kubernetes.io/config.mirror"] != "x" {
		t.Errorf("Object() = %+v", o)
	}
	// Equal label sets are one map.
	if reflect.ValueOf(s.Pods[0].Labels).UnsafePointer() != reflect.ValueOf(s.Pods[1].Labels).UnsafePointer() {
		t.Error("equal label sets of two pods are not shared")
	}
}

// Static pods in kube-system (the control plane's) keep their liveness
// probes, which have no template to be read from; the same pod elsewhere
// does not.
func TestTrimControlPlaneStaticPodKeepsLiveness(t *testing.T) {
	s := New(Source{})
	static, plain := fullPod("etcd-cp-0"), fullPod("etcd-cp-1")
	static.Namespace = "kube-system"
	plain.Namespace = "kube-system"
	plain.Annotations = nil
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{static, plain}})
	s.Finish()
	if p := s.Pods[0].Spec.Containers[0].LivenessProbe; p == nil || p.HTTPGet == nil {
		t.Errorf("static pod in kube-system: liveness probe %v, want kept", p)
	}
	if o := s.Pods[0].Object(); o.Spec.Containers[0].LivenessProbe == nil {
		t.Error("static pod written back without its liveness probe")
	}
	if p := s.Pods[1].Spec.Containers[0].LivenessProbe; p != nil {
		t.Errorf("pod that is not a mirror: liveness probe %v, want nil", p)
	}
}

// A pod being deleted keeps its finalizers (what holds it past its grace
// period); a live one does not carry them.
func TestTrimPodKeepsFinalizersOnlyWhenDeleting(t *testing.T) {
	s := New(Source{})
	deleting, live := fullPod("deleting"), fullPod("live")
	now := metav1.Now()
	deleting.DeletionTimestamp = &now
	deleting.Finalizers = []string{"example.com/backup"}
	live.Finalizers = []string{"example.com/backup"}
	_, add, _ := ListKind(Pods)
	add(s, &corev1.PodList{Items: []corev1.Pod{deleting, live}})
	s.Finish()
	if got := s.Pods[0].Finalizers; len(got) != 1 || got[0] != "example.com/backup" {
		t.Errorf("deleting pod: finalizers %v, want kept", got)
	}
	if o := s.Pods[0].Object(); len(o.Finalizers) != 1 {
		t.Errorf("deleting pod written back with finalizers %v", o.Finalizers)
	}
	if got := s.Pods[1].Finalizers; got != nil {
		t.Errorf("live pod: finalizers %v, want none kept", got)
	}
}

func TestInternerLabelSets(t *testing.T) {
	var in interner
	a := in.labelSet(map[string]string{"a": "1", "b": "2"})
	b := in.labelSet(map[string]string{"b": "2", "a": "1"})
	c := in.labelSet(map[string]string{"a": "1", "b": "3"})
	d := in.labelSet(map[string]string{"a": "1\x00b", "": "2"}) // keys and values cannot hold NUL, but must not collide
	if reflect.ValueOf(a).UnsafePointer() != reflect.ValueOf(b).UnsafePointer() {
		t.Error("equal sets not shared")
	}
	if c["b"] != "3" || reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(c).UnsafePointer() {
		t.Errorf("different sets shared: %v %v", a, c)
	}
	if len(d) != 2 || in.labelSet(nil) != nil {
		t.Errorf("d = %v", d)
	}
	if s := in.str(strings.Repeat("x", 3)); s != "xxx" || in.str("") != "" {
		t.Errorf("str = %q", s)
	}
}

func TestTrimReplicaSetTemplate(t *testing.T) {
	p := fullPod("x")
	rs := appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "team-a", UID: "rs"},
		Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: map[string]string{"a": "b"}}, Spec: p.Spec}},
	}
	s := New(Source{})
	_, add, _ := ListKind(ReplicaSets)
	add(s, &appsv1.ReplicaSetList{Items: []appsv1.ReplicaSet{rs}})
	got := s.ReplicaSets[0].Spec.Template
	if got.Labels["app"] != "web" || got.Annotations != nil || len(got.Spec.Containers) != 1 ||
		got.Spec.Containers[0].Image != "nginx:1" || got.Spec.Volumes != nil || got.Spec.NodeName != "" ||
		got.Spec.Containers[0].Env[0].Value != Redacted || got.Spec.Containers[0].VolumeMounts != nil {
		t.Errorf("template = %+v", got)
	}
}

func TestTrimWorkloadTemplate(t *testing.T) {
	p := fullPod("x")
	p.Spec.NodeSelector = map[string]string{"pool": "a"}
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
	p.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 30"}}}}
	grace := int64(45)
	p.Spec.TerminationGracePeriodSeconds = &grace
	p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "POLICY", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "params"}, Key: "policy"}}},
		corev1.EnvVar{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}})
	d := appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", UID: "d"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: p.Labels, Annotations: map[string]string{"a": "b"}}, Spec: p.Spec}},
	}
	s := New(Source{})
	_, add, _ := ListKind(Deployments)
	add(s, &appsv1.DeploymentList{Items: []appsv1.Deployment{d}})
	got := s.Deployments[0].Spec.Template
	c := got.Spec.Containers[0]
	checks := []struct {
		name string
		ok   bool
	}{
		{"labels, no other annotations", got.Labels["app"] == "web" && got.Annotations == nil},
		{"scheduling", got.Spec.NodeSelector["pool"] == "a" && len(got.Spec.Tolerations) == 1 && got.Spec.ServiceAccountName == "sa" &&
			got.Spec.PriorityClassName == "high" && got.Spec.HostNetwork && got.Spec.NodeName == "node-1"},
		{"containers", len(got.Spec.Containers) == 1 && c.Image == "nginx:1" && c.ImagePullPolicy == corev1.PullAlways &&
			len(got.Spec.InitContainers) == 1},
		{"resources", c.Resources.Limits.Cpu().String() == "1" && c.Resources.Requests.Memory().String() == "1Gi"},
		{"env names, values redacted", len(c.Env) == 4 && c.Env[0].Value == Redacted && c.Env[1].ValueFrom == nil},
		{"a ConfigMap key reference kept, a Secret's dropped", len(c.Env) == 4 && c.Env[2].ValueFrom != nil &&
			c.Env[2].ValueFrom.ConfigMapKeyRef.Name == "params" && c.Env[2].ValueFrom.ConfigMapKeyRef.Key == "policy" &&
			c.Env[3].ValueFrom == nil && c.Env[3].Value == Redacted},
		{"hostPath volume and its mount only", len(got.Spec.Volumes) == 1 && got.Spec.Volumes[0].HostPath.Path == "/opt/cni/bin" &&
			len(c.VolumeMounts) == 1 && c.VolumeMounts[0].Name == "cni"},
		{"command and probes", len(c.Command) == 1 && c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil},
		{"preStop kept as a marker, the hook dropped", c.Lifecycle == PreStopKept && c.Lifecycle.PreStop.Exec == nil},
		{"grace period", got.Spec.TerminationGracePeriodSeconds != nil && *got.Spec.TerminationGracePeriodSeconds == 45},
		{"dropped", c.Ports == nil && c.SecurityContext == nil && got.Spec.InitContainers[0].Lifecycle == nil},
	}
	for _, tc := range checks {
		if !tc.ok {
			t.Errorf("%s: not as expected in %+v", tc.name, got)
		}
	}
}

func TestLeadingTypeMeta(t *testing.T) {
	cases := []struct {
		in     string
		kind   string
		apiVer string
		ok     bool
	}{
		{`{"kind":"Pod","apiVersion":"v1","metadata":{}}`, "Pod", "v1", true},
		{`{"kind":"DaemonSet","apiVersion":"apps/v1"}`, "DaemonSet", "apps/v1", true},
		{`{"apiVersion":"v1","kind":"Pod"}`, "", "", false},
		{`{ "kind":"Pod","apiVersion":"v1"}`, "", "", false},
		{`{"kind":"P\"od","apiVersion":"v1"}`, "", "", false},
		{`{"kind":"Pod","metadata":{}}`, "", "", false},
		{`{"kind":"Pod`, "", "", false},
	}
	for _, c := range cases {
		tm, ok := leadingTypeMeta([]byte(c.in))
		if ok != c.ok || tm.Kind != c.kind || tm.APIVersion != c.apiVer {
			t.Errorf("leadingTypeMeta(%s) = %+v, %v; want %q %q %v", c.in, tm, ok, c.kind, c.apiVer, c.ok)
		}
	}
}

// A snippet annotation is kept as present, its NGINX text redacted: it can
// carry credentials, and checks read only that it is there.
func TestSnippetAnnotationKeptRedacted(t *testing.T) {
	got := keptAnnotationsOf(map[string]string{
		"nginx.ingress.kubernetes.io/configuration-snippet": `proxy_set_header Authorization "Bearer s3cret";`,
		"kubectl.kubernetes.io/last-applied-configuration":  "{}",
	})
	if len(got) != 1 || got["nginx.ingress.kubernetes.io/configuration-snippet"] != Redacted {
		t.Errorf("kept %v, want the snippet annotation alone, redacted", got)
	}
}

// argocd-cmd-params-cm keeps only the ApplicationSet controller's keys:
// another component's parameter (otlp.headers can carry a token) never
// reaches a snapshot or a report.
func TestArgoCmdParamsKeepsApplicationSetKeysOnly(t *testing.T) {
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cmd-params-cm"},
		Data: map[string]string{"applicationsetcontroller.policy": "create-update", "otlp.headers": "authorization=Bearer s3cret"}}
	keepNamedConfigMap(&cm, nil)
	if len(cm.Data) != 1 || cm.Data["applicationsetcontroller.policy"] != "create-update" {
		t.Errorf("kept %v, want the policy key alone", cm.Data)
	}
}

// OpenShift's node configuration keeps only spec.cgroupMode.
func TestTrimOpenShiftNodeConfig(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "config.openshift.io/v1", "kind": "Node",
		"metadata": map[string]any{"name": "cluster"},
		"spec":     map[string]any{"cgroupMode": "v1", "workerLatencyProfile": "Default"},
		"status":   map[string]any{"conditions": []any{map[string]any{"type": "CGroupMode"}}},
	}}
	trimCustom(u)
	if want := map[string]any{"cgroupMode": "v1"}; !reflect.DeepEqual(u.Object["spec"], want) || u.Object["status"] != nil {
		t.Errorf("trimmed to spec %v, status %v", u.Object["spec"], u.Object["status"])
	}
}

// trimMeta notes the field managers of kube-system/coredns only, and as
// edits only the watched fields owned by a manager other than eks, eks-*
// or kube-*; managedFields themselves are dropped.
func TestTrimMetaNotesCoreDNSFieldManagers(t *testing.T) {
	fields := func(raw string) *metav1.FieldsV1 { f := metav1.FieldsV1{}; f.SetRawBytes([]byte(raw)); return &f }
	mf := []metav1.ManagedFieldsEntry{
		{Manager: "eks", Operation: metav1.ManagedFieldsOperationApply, FieldsV1: fields(`{"f:spec":{"f:template":{}}}`)},
		{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "eks-coredns-autoscaler", Operation: metav1.ManagedFieldsOperationUpdate, FieldsV1: fields(`{"f:spec":{"f:replicas":{}}}`)},
	}
	m := metav1.ObjectMeta{Name: "coredns", Namespace: "kube-system", ManagedFields: mf}
	trimMeta(&m)
	if m.ManagedFields != nil {
		t.Error("managedFields kept")
	}
	if got := m.Annotations[AnnotationFieldManagers]; got != "eks,eks-coredns-autoscaler,kube-controller-manager,kubectl-edit" {
		t.Errorf("managers %q", got)
	}
	if got := m.Annotations[AnnotationManagedEdits]; got != "spec.replicas=kubectl-edit" {
		t.Errorf("edits %q", got)
	}
	other := metav1.ObjectMeta{Name: "web", Namespace: "kube-system", ManagedFields: mf}
	trimMeta(&other)
	if len(other.Annotations) != 0 {
		t.Errorf("an unwatched object got %v", other.Annotations)
	}
}

// A KEDA TriggerAuthentication keeps only the pod identity provider:
// secret references, environment names and vault settings go.
func TestTrimKedaAuthKeepsProviderOnly(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "keda.sh/v1alpha1", "kind": "TriggerAuthentication",
		"metadata": map[string]any{"name": "a", "namespace": "default"},
		"spec": map[string]any{
			"podIdentity":     map[string]any{"provider": "azure", "identityId": "00000000-0000-0000-0000-000000000000"},
			"secretTargetRef": []any{map[string]any{"parameter": "connection", "name": "bus", "key": "conn"}},
			"hashiCorpVault":  map[string]any{"address": "https://vault.example.com"},
		},
		"status": map[string]any{"scaledobjects": "worker"},
	}}
	trimCustom(u)
	want := map[string]any{"podIdentity": map[string]any{"provider": "azure"}}
	if got := u.Object["spec"]; !reflect.DeepEqual(got, want) {
		t.Errorf("spec %v, want %v", got, want)
	}
	if _, ok := u.Object["status"]; ok {
		t.Error("status kept")
	}
}

// noteWrittenAs records a last-applied spec.replicas, or a server-side
// apply that owns spec.replicas, in AnnotationAppliedReplicas; a
// last-applied manifest without replicas records nothing.
func TestNoteAppliedReplicas(t *testing.T) {
	withLA := func(la string) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: la}}}
	}
	d := withLA(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":2}}`)
	noteWrittenAs(d, "apps/v1")
	if got := d.Annotations[AnnotationAppliedReplicas]; got != "last-applied-configuration spec.replicas 2" {
		t.Errorf("last-applied: %q", got)
	}
	d = withLA(`{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`)
	noteWrittenAs(d, "apps/v1")
	if got, ok := d.Annotations[AnnotationAppliedReplicas]; ok {
		t.Errorf("no replicas applied, got %q", got)
	}
	d = &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{
		{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "scale",
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{}}}`)},
		{Manager: "argocd-controller", Operation: metav1.ManagedFieldsOperationApply,
			FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:replicas":{},"f:template":{}}}`)},
	}}}
	noteWrittenAs(d, "apps/v1")
	if got := d.Annotations[AnnotationAppliedReplicas]; got != "server-side apply by argocd-controller" {
		t.Errorf("server-side apply: %q", got)
	}
}
