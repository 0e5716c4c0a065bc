package loadgen

import (
	"fmt"
	"math/rand/v2"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// epoch anchors every timestamp, so that the same seed gives the same
// objects on any day.
var epoch = time.Date(2025, 6, 2, 8, 0, 0, 0, time.UTC)

func ts(offset time.Duration) metav1.Time { return metav1.NewTime(epoch.Add(offset)) }

func ptr[T any](v T) *T { return &v }

// --- nodes -------------------------------------------------------------

func (s *Spec) node(i int) *corev1.Node {
	p := poolOf(i, s.Nodes)
	r := s.rng(streamNode, uint64(i))
	name := nodeName(i)
	zone := []string{"1", "2", "3"}[i%3]
	labels := map[string]string{
		"kubernetes.io/hostname":           name,
		"kubernetes.io/os":                 "linux",
		"kubernetes.io/arch":               "amd64",
		"beta.kubernetes.io/os":            "linux",
		"beta.kubernetes.io/arch":          "amd64",
		"node.kubernetes.io/instance-type": []string{"Standard_D8ds_v5", "m6i.2xlarge", "n2-standard-8"}[i%3],
	}
	ann := map[string]string{
		"node.alpha.kubernetes.io/ttl":                           "0",
		"volumes.kubernetes.io/controller-managed-attach-detach": "true",
	}
	var providerID string
	switch p.provider {
	case "aks":
		labels["kubernetes.azure.com/agentpool"] = p.name
		labels["kubernetes.azure.com/cluster"] = "MC_prod_prod-weu_westeurope"
		labels["kubernetes.azure.com/node-image-version"] = "AKS" + p.name + "-202505.14.0"
		labels["kubernetes.azure.com/mode"] = map[bool]string{true: "system", false: "user"}[p.system]
		labels["topology.kubernetes.io/region"] = "westeurope"
		labels["topology.kubernetes.io/zone"] = "westeurope-" + zone
		providerID = fmt.Sprintf("azure:///subscriptions/3f1c2a8e-0000-4000-8000-1234567890ab/resourceGroups/mc_prod/providers/Microsoft.Compute/virtualMachineScaleSets/%s-vmss/virtualMachines/%d", p.name, i)
	case "eks":
		labels["eks.amazonaws.com/nodegroup"] = p.name
		labels["eks.amazonaws.com/capacityType"] = []string{"ON_DEMAND", "SPOT"}[r.IntN(2)]
		labels["topology.kubernetes.io/region"] = "eu-west-1"
		labels["topology.kubernetes.io/zone"] = "eu-west-1" + string(rune('a'+i%3))
		providerID = fmt.Sprintf("aws:///eu-west-1%c/i-0%016x", 'a'+i%3, r.Uint64())
	case "gke":
		labels["cloud.google.com/gke-nodepool"] = p.name
		labels["cloud.google.com/gke-os-distribution"] = map[bool]string{true: "cos", false: "ubuntu"}[p.name == "gke-cos"]
		labels["cloud.google.com/machine-family"] = "n2"
		labels["topology.kubernetes.io/region"] = "europe-west4"
		labels["topology.kubernetes.io/zone"] = "europe-west4-" + string(rune('a'+i%3))
		providerID = fmt.Sprintf("gce://acme-prod/europe-west4-%c/%s", 'a'+i%3, name)
	default:
		labels["node.kubernetes.io/pool"] = p.name
	}
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: ann},
		Spec:       corev1.NodeSpec{ProviderID: providerID, PodCIDR: fmt.Sprintf("10.%d.%d.0/24", 64+i/256, i%256)},
	}
	n.Spec.PodCIDRs = []string{n.Spec.PodCIDR}
	if p.system {
		n.Spec.Taints = []corev1.Taint{{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoSchedule}}
	}
	return n
}

// nodeStatus fills in what a kubelet reports. About one node in a hundred
// is NotReady.
func (s *Spec) nodeStatus(n *corev1.Node, i int) {
	p := poolOf(i, s.Nodes)
	r := s.rng(streamNode, uint64(i)+1<<40)
	ready := corev1.ConditionTrue
	reason, msg := "KubeletReady", "kubelet is posting ready status"
	if r.IntN(100) == 0 {
		ready, reason, msg = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
	}
	beat := ts(72 * time.Hour)
	cond := func(t corev1.NodeConditionType, st corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: st, Reason: reason, Message: msg,
			LastHeartbeatTime: beat, LastTransitionTime: ts(time.Duration(r.IntN(48)) * time.Hour)}
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("8"),
		corev1.ResourceMemory:           resource.MustParse("32876252Ki"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("129886128Ki"),
		"hugepages-1Gi":                 resource.MustParse("0"),
		"hugepages-2Mi":                 resource.MustParse("0"),
	}
	alloc := capacity.DeepCopy()
	alloc[corev1.ResourceCPU] = resource.MustParse("7820m")
	alloc[corev1.ResourceMemory] = resource.MustParse("28236508Ki")
	ip := fmt.Sprintf("10.%d.%d.%d", 224+i/65536, i/256%256, i%256)
	n.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: alloc,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, ready, reason, msg),
		},
		Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: n.Name}},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64()),
			SystemUUID:              fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff),
			BootID:                  fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint32()&0xffff, r.Uint64()&0xffffffffffff),
			KernelVersion:           p.kernel,
			OSImage:                 p.osImage,
			ContainerRuntimeVersion: p.runtime,
			KubeletVersion:          p.kubelet,
			OperatingSystem:         "linux",
			Architecture:            "amd64",
		},
	}
	// The image list is the bulk of a real Node object.
	for k, img := range append(dsImages(), apps[r.IntN(len(apps))].image, apps[r.IntN(len(apps))].image, "registry.k8s.io/pause:3.10") {
		n.Status.Images = append(n.Status.Images, corev1.ContainerImage{
			Names:     []string{fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", img, r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()), img},
			SizeBytes: int64(20_000_000 + k*7_000_000 + r.IntN(1_000_000)),
		})
	}
}

// --- DaemonSets ---------------------------------------------------------

// daemonSet is one of the node agents every node runs.
type daemonSet struct {
	name, image, pull string
	hostNetwork       bool
	cniInstall        bool
}

var daemonSets = []daemonSet{
	{"azure-cns", "mcr.microsoft.com/containernetworking/azure-cns:v1.6.25", "IfNotPresent", true, true},
	{"kube-proxy", "registry.k8s.io/kube-proxy:v1.37.2", "IfNotPresent", true, false},
	{"fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:4.0.3", "Always", false, false},
}

func dsImages() []string {
	out := make([]string, len(daemonSets))
	for i, d := range daemonSets {
		out[i] = d.image
	}
	return out
}

func (d daemonSet) podSpec() corev1.PodSpec {
	spec := corev1.PodSpec{
		HostNetwork:        d.hostNetwork,
		PriorityClassName:  "system-node-critical",
		ServiceAccountName: d.name,
		Tolerations:        []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		Containers: []corev1.Container{{
			Name: d.name, Image: d.image, ImagePullPolicy: corev1.PullPolicy(d.pull),
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			Env: []corev1.EnvVar{{Name: "NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
				{Name: "LOG_LEVEL", Value: "info"}},
			SecurityContext: &corev1.SecurityContext{Privileged: ptr(d.hostNetwork)},
			VolumeMounts:    []corev1.VolumeMount{{Name: "host-var-log", MountPath: "/var/log", ReadOnly: true}},
		}},
		Volumes: []corev1.Volume{{Name: "host-var-log", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}},
	}
	if d.cniInstall {
		spec.InitContainers = []corev1.Container{{
			Name: "cni-installer", Image: d.image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command:         []string{"/bin/sh", "-c", "cp /opt/cni/bin/* /host/opt/cni/bin/"},
			SecurityContext: &corev1.SecurityContext{Privileged: ptr(true)},
			VolumeMounts:    []corev1.VolumeMount{{Name: "cni-bin", MountPath: "/host/opt/cni/bin"}},
		}}
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "cni-bin",
			VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/opt/cni/bin", Type: ptr(corev1.HostPathDirectory)}}})
	}
	return spec
}

func (s *Spec) daemonSet(d daemonSet) *appsv1.DaemonSet {
	labels := map[string]string{"k8s-app": d.name}
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: d.name, Namespace: metav1.NamespaceSystem, Labels: labels,
			Annotations: map[string]string{"deprecated.daemonset.template.generation": "3"}},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: d.podSpec()},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxUnavailable: ptr(intstr.FromString("10%"))}},
		},
	}
}

func (s *Spec) daemonSetStatus(ds *appsv1.DaemonSet) {
	n := int32(s.Nodes)
	ds.Status = appsv1.DaemonSetStatus{
		CurrentNumberScheduled: n, DesiredNumberScheduled: n, NumberReady: n, NumberAvailable: n,
		UpdatedNumberScheduled: n, ObservedGeneration: ds.Generation,
	}
}

// --- pods ----------------------------------------------------------------

// podState is how a generated pod is doing.
type podState int

const (
	podRunning podState = iota
	podCrashLoop
	podUnschedulable
	podSandboxFailing
	podImagePullBackOff
)

func pickState(r *rand.Rand, crashRate float64) podState {
	x := r.Float64()
	switch {
	case x < crashRate:
		return podCrashLoop
	case x < crashRate+0.02:
		return podUnschedulable
	case x < crashRate+0.03:
		return podSandboxFailing
	case x < crashRate+0.035:
		return podImagePullBackOff
	}
	return podRunning
}

// podIP derives a unique pod IP from the pod's index.
func podIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 64+i/65536, i/256%256, i%256) }

// dsPod is DaemonSet d's pod on node n: pod index n*len(daemonSets)+d.
func (s *Spec) dsPod(d int, dsUID types.UID, n int) (*corev1.Pod, podState) {
	ds := daemonSets[d]
	idx := n*len(daemonSets) + d
	r := s.rng(streamPod, uint64(idx))
	spec := ds.podSpec()
	spec.NodeName = nodeName(n)
	spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{spec.NodeName}}}}}}}}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: ds.name + "-" + s.podSuffix(idx), Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"k8s-app": ds.name, "controller-revision-hash": "6d8f7b9c4", "pod-template-generation": "3"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: ds.name, UID: dsUID,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		Spec: spec,
	}
	st := podRunning
	if r.IntN(400) == 0 {
		st = podCrashLoop
	}
	return p, st
}

// workloadPod is replica j of workload w.
func (s *Spec) workloadPod(w *workload, ownerUID types.UID, j int) (*corev1.Pod, podState) {
	idx := w.firstPod + j
	r := s.rng(streamPod, uint64(1<<40+idx))
	labels := map[string]string{"app.kubernetes.io/name": w.app, "app.kubernetes.io/instance": w.name, "app": w.name}
	owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: w.name + "-" + w.rsHash, UID: ownerUID,
		Controller: ptr(true), BlockOwnerDeletion: ptr(true)}
	name := w.name + "-" + w.rsHash + "-" + s.podSuffix(1<<24+idx)
	if w.stateful {
		owner.Kind, owner.Name = "StatefulSet", w.name
		name = fmt.Sprintf("%s-%d", w.name, j)
		labels["statefulset.kubernetes.io/pod-name"] = name
		labels["controller-revision-hash"] = w.name + "-" + w.rsHash
	} else {
		labels["pod-template-hash"] = w.rsHash
	}
	spec := w.podSpec()
	st := pickState(r, w.crashRate)
	if st != podUnschedulable {
		spec.NodeName = s.workerNode(r)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: w.namespace, Labels: labels,
			Annotations: map[string]string{
				"prometheus.io/scrape": "true", "prometheus.io/port": "9090",
				"kubectl.kubernetes.io/restartedAt": epoch.Add(-48 * time.Hour).Format(time.RFC3339),
			},
			OwnerReferences: []metav1.OwnerReference{owner},
		},
		Spec: spec,
	}, st
}

// workerNode picks a node outside the system pool, when there is one.
func (s *Spec) workerNode(r *rand.Rand) string {
	for range 8 {
		i := r.IntN(s.Nodes)
		if !poolOf(i, s.Nodes).system {
			return nodeName(i)
		}
	}
	return nodeName(r.IntN(s.Nodes))
}

func (w *workload) podSpec() corev1.PodSpec {
	c := corev1.Container{
		Name: w.app, Image: w.image, ImagePullPolicy: corev1.PullPolicy(w.pull),
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "APP_ENV", Value: "production"},
			{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Value: "http://otel-collector.observability:4317"},
			{Name: "DATABASE_URL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: w.name + "-db"}, Key: "url"}}},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		LivenessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromString("http")}},
			PeriodSeconds: 10, FailureThreshold: 3},
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString("http")}},
			PeriodSeconds: 5},
		SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ptr(true), AllowPrivilegeEscalation: ptr(false),
			ReadOnlyRootFilesystem: ptr(true), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		VolumeMounts: []corev1.VolumeMount{{Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
			{Name: "tmp", MountPath: "/tmp"}},
	}
	spec := corev1.PodSpec{
		Containers:         []corev1.Container{c},
		ServiceAccountName: "default",
		Volumes: []corev1.Volume{
			{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(420)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}},
		},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone",
			WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.name}}}},
	}
	if w.sidecar {
		spec.Containers = append(spec.Containers, corev1.Container{
			Name: "mesh-proxy", Image: "docker.io/envoyproxy/envoy:v1.34.1", ImagePullPolicy: corev1.PullIfNotPresent,
			Ports: []corev1.ContainerPort{{Name: "envoy-admin", ContainerPort: 15000}},
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"),
				corev1.ResourceMemory: resource.MustParse("64Mi")}},
		})
	}
	if w.hasInit {
		spec.InitContainers = []corev1.Container{{Name: "migrate", Image: w.image, ImagePullPolicy: corev1.PullIfNotPresent,
			Command: []string{"/app/migrate", "--wait"}}}
	}
	return spec
}

// podStatus fills in what a kubelet (or the scheduler) reports for state.
func podStatus(p *corev1.Pod, st podState, idx int, hostIP string) {
	r := rand.New(rand.NewPCG(uint64(idx), 7))
	start := ts(-time.Duration(1+r.IntN(30*24)) * time.Hour)
	cond := func(t corev1.PodConditionType, s corev1.ConditionStatus) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: s, LastTransitionTime: start}
	}
	ps := corev1.PodStatus{QOSClass: p.Status.QOSClass} // computed by the API server, immutable
	if st == podUnschedulable {
		ps.Phase = corev1.PodPending
		c := cond(corev1.PodScheduled, corev1.ConditionFalse)
		c.Reason, c.Message = "Unschedulable", "0/500 nodes are available: 3 Insufficient cpu, 12 node(s) had untolerated taint {CriticalAddonsOnly: true}. preemption: 0/500 nodes are available: 500 No preemption victims found for incoming pod."
		ps.Conditions = []corev1.PodCondition{c}
		p.Status = ps
		return
	}
	ps.HostIP, ps.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	ps.StartTime = &start
	if !p.Spec.HostNetwork && st != podSandboxFailing {
		ps.PodIP, ps.PodIPs = podIP(idx), []corev1.PodIP{{IP: podIP(idx)}}
	} else if p.Spec.HostNetwork {
		ps.PodIP, ps.PodIPs = hostIP, []corev1.PodIP{{IP: hostIP}}
	}
	ready := corev1.ConditionTrue
	if st != podRunning {
		ready = corev1.ConditionFalse
	}
	ps.Conditions = []corev1.PodCondition{
		cond(corev1.PodReadyToStartContainers, map[bool]corev1.ConditionStatus{true: corev1.ConditionFalse, false: corev1.ConditionTrue}[st == podSandboxFailing]),
		cond(corev1.PodInitialized, corev1.ConditionTrue),
		cond(corev1.PodReady, ready),
		cond(corev1.ContainersReady, ready),
		cond(corev1.PodScheduled, corev1.ConditionTrue),
	}
	ps.Phase = corev1.PodRunning
	if st == podSandboxFailing || st == podImagePullBackOff {
		ps.Phase = corev1.PodPending
	}
	for k, c := range p.Spec.Containers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID:     fmt.Sprintf("%s@sha256:%016x%016x%016x%016x", c.Image, r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64()),
			ContainerID: fmt.Sprintf("containerd://%016x%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64())}
		switch {
		case st == podRunning || k > 0 && st == podCrashLoop:
			cs.Ready, cs.Started = true, ptr(true)
			cs.State.Running = &corev1.ContainerStateRunning{StartedAt: start}
		case st == podCrashLoop:
			cs.Started = ptr(false)
			cs.RestartCount = int32(5 + r.IntN(400))
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff",
				Message: fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)", c.Name, p.Name, p.Namespace, p.UID)}
			cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error",
				StartedAt: start, FinishedAt: start, ContainerID: cs.ContainerID}
		case st == podImagePullBackOff:
			cs.ImageID, cs.ContainerID = "", ""
			cs.Started = ptr(false)
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff",
				Message: fmt.Sprintf("Back-off pulling image %q", c.Image)}
		default: // sandbox failing
			cs.ImageID, cs.ContainerID = "", ""
			cs.Started = ptr(false)
			cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}
		}
		ps.ContainerStatuses = append(ps.ContainerStatuses, cs)
	}
	for _, c := range p.Spec.InitContainers {
		cs := corev1.ContainerStatus{Name: c.Name, Image: c.Image, Ready: true,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: start, FinishedAt: start}}}
		if st == podSandboxFailing {
			cs.Ready, cs.State = false, corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}
		}
		ps.InitContainerStatuses = append(ps.InitContainerStatuses, cs)
	}
	p.Status = ps
}

// nodeIP is the InternalIP of node i, as nodeStatus sets it.
func nodeIP(i int) string { return fmt.Sprintf("10.%d.%d.%d", 224+i/65536, i/256%256, i%256) }

// --- workloads -------------------------------------------------------------

func (w *workload) selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.name}}
}

func (w *workload) template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": w.app, "app.kubernetes.io/instance": w.name, "app": w.name},
			Annotations: map[string]string{"prometheus.io/scrape": "true"}},
		Spec: w.podSpec(),
	}
}

func (w *workload) meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: w.name, Namespace: w.namespace,
		Labels:      map[string]string{"app.kubernetes.io/name": w.app, "app.kubernetes.io/instance": w.name, "app.kubernetes.io/managed-by": "Helm"},
		Annotations: map[string]string{"meta.helm.sh/release-name": w.name, "meta.helm.sh/release-namespace": w.namespace}}
}

func (w *workload) deployment() *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: w.meta(), Spec: appsv1.DeploymentSpec{
		Replicas: ptr(int32(w.replicas)), Selector: w.selector(), Template: w.template(),
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
			MaxUnavailable: ptr(intstr.FromString("25%")), MaxSurge: ptr(intstr.FromString("25%"))}},
	}}
}

func (w *workload) replicaSet(depUID types.UID) *appsv1.ReplicaSet {
	t := w.template()
	t.Labels["pod-template-hash"] = w.rsHash
	sel := w.selector()
	sel.MatchLabels["pod-template-hash"] = w.rsHash
	m := w.meta()
	m.Name = w.name + "-" + w.rsHash
	m.Labels["pod-template-hash"] = w.rsHash
	m.Annotations = map[string]string{"deployment.kubernetes.io/desired-replicas": fmt.Sprint(w.replicas),
		"deployment.kubernetes.io/max-replicas": fmt.Sprint(w.replicas + (w.replicas+3)/4), "deployment.kubernetes.io/revision": "7"}
	m.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: w.name, UID: depUID,
		Controller: ptr(true), BlockOwnerDeletion: ptr(true)}}
	return &appsv1.ReplicaSet{ObjectMeta: m, Spec: appsv1.ReplicaSetSpec{Replicas: ptr(int32(w.replicas)), Selector: sel, Template: t}}
}

func (w *workload) statefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{ObjectMeta: w.meta(), Spec: appsv1.StatefulSetSpec{
		Replicas: ptr(int32(w.replicas)), Selector: w.selector(), Template: w.template(), ServiceName: w.name,
		PodManagementPolicy: appsv1.OrderedReadyPodManagement,
	}}
}

func (w *workload) pdbObject() *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: w.namespace},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: w.selector()}}
	switch w.pdb {
	case 1:
		p.Spec.MinAvailable = ptr(intstr.FromInt32(1))
	case 2:
		p.Spec.MaxUnavailable = ptr(intstr.FromInt32(0))
	default:
		p.Spec.MaxUnavailable = ptr(intstr.FromInt32(1))
	}
	return p
}

// pdbStatus is what the disruption controller would report, given how many
// of the workload's pods are healthy.
func (w *workload) pdbStatus(p *policyv1.PodDisruptionBudget, healthy int) {
	desired := 0
	switch w.pdb {
	case 1:
		desired = 1
	case 2:
		desired = w.replicas
	default:
		desired = max(0, w.replicas-1)
	}
	allowed := max(0, healthy-desired)
	cond := metav1.Condition{Type: policyv1.DisruptionAllowedCondition, Status: metav1.ConditionTrue, Reason: policyv1.SufficientPodsReason,
		LastTransitionTime: ts(0), ObservedGeneration: p.Generation}
	if allowed == 0 {
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1.InsufficientPodsReason
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: p.Generation, DisruptionsAllowed: int32(allowed),
		CurrentHealthy: int32(healthy), DesiredHealthy: int32(desired), ExpectedPods: int32(w.replicas),
		Conditions: []metav1.Condition{cond}}
}

func (w *workload) service() *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: w.namespace, Labels: map[string]string{"app": w.name}},
		Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"app": w.name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}}}
}

// endpointSlice holds up to 100 endpoints of a service, as the controller
// splits them.
func endpointSlice(ns, svc string, part int, eps []discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%05d", svc, part), Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc, discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   eps,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
	}
}

// --- events ------------------------------------------------------------------

// podEvents are the events a pod in state st leaves behind: Warnings for
// the broken ones, and some Normal ones (which kubegap's field selector
// skips) for the rest.
func podEvents(p *corev1.Pod, st podState, idx int, osImage string) []*corev1.Event {
	r := rand.New(rand.NewPCG(uint64(idx), 11))
	mk := func(typ, reason, msg string, count int32) *corev1.Event {
		return &corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%016x", p.Name, r.Uint64()), Namespace: p.Namespace},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID,
				APIVersion: "v1", ResourceVersion: p.ResourceVersion},
			Type: typ, Reason: reason, Message: msg, Count: count,
			Source:         corev1.EventSource{Component: "kubelet", Host: p.Spec.NodeName},
			FirstTimestamp: ts(-2 * time.Hour), LastTimestamp: ts(-time.Duration(r.IntN(600)) * time.Second),
			ReportingController: "kubelet", ReportingInstance: p.Spec.NodeName,
		}
	}
	image := p.Spec.Containers[0].Image
	switch st {
	case podCrashLoop:
		return []*corev1.Event{mk(corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container "+p.Spec.Containers[0].Name+" in pod "+p.Name, int32(20+r.IntN(2000)))}
	case podUnschedulable:
		e := mk(corev1.EventTypeWarning, "FailedScheduling", p.Status.Conditions[0].Message, int32(1+r.IntN(50)))
		e.Source = corev1.EventSource{Component: "default-scheduler"}
		e.ReportingController, e.ReportingInstance = "default-scheduler", "default-scheduler-1"
		return []*corev1.Event{e}
	case podImagePullBackOff:
		return []*corev1.Event{
			mk(corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: failed to copy: httpReadSeeker: failed open: unexpected status code 429 Too Many Requests - Server message: toomanyrequests: You have reached your unauthenticated pull rate limit", image), int32(5+r.IntN(40))),
			mk(corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff", int32(5+r.IntN(100))),
		}
	case podSandboxFailing:
		msg := fmt.Sprintf(`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "%016x%016x": plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set`, r.Uint64(), r.Uint64())
		if osImage == "Ubuntu 20.04.6 LTS" {
			msg = fmt.Sprintf(`Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "%016x%016x": plugin type="azure-vnet" failed (add): netplugin failed: "/opt/cni/bin/azure-vnet: /lib/x86_64-linux-gnu/libc.so.6: version `+"`GLIBC_2.34'"+` not found (required by /opt/cni/bin/azure-vnet)"`, r.Uint64(), r.Uint64())
		}
		return []*corev1.Event{mk(corev1.EventTypeWarning, "FailedCreatePodSandBox", msg, int32(10+r.IntN(300)))}
	}
	if r.IntN(10) == 0 {
		return []*corev1.Event{mk(corev1.EventTypeNormal, "Pulled", fmt.Sprintf("Container image %q already present on machine", image), 1)}
	}
	return nil
}

// --- webhooks ------------------------------------------------------------------

const webhookNS = "policy-system"

// webhookBackends are the Services the webhooks call, with how many pods
// back each.
var webhookBackends = []struct {
	name string
	pods int
}{{"policy-engine", 1}, {"sidecar-injector", 3}, {"cert-manager-webhook", 2}}

func webhookConfigs() ([]*admissionv1.ValidatingWebhookConfiguration, []*admissionv1.MutatingWebhookConfiguration) {
	ref := func(svc, path string) admissionv1.WebhookClientConfig {
		return admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: webhookNS, Name: svc, Path: ptr(path), Port: ptr(int32(443))},
			CABundle: []byte("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIRAKk=\n-----END CERTIFICATE-----\n")}
	}
	rule := func(groups, versions, resources []string, ops ...admissionv1.OperationType) []admissionv1.RuleWithOperations {
		return []admissionv1.RuleWithOperations{{Operations: ops, Rule: admissionv1.Rule{APIGroups: groups, APIVersions: versions,
			Resources: resources, Scope: ptr(admissionv1.AllScopes)}}}
	}
	none := admissionv1.SideEffectClassNone
	validating := []*admissionv1.ValidatingWebhookConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "policy-engine"}, Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "validate.policy-engine.example.com", ClientConfig: ref("policy-engine", "/validate"),
			Rules:         rule([]string{""}, []string{"v1"}, []string{"pods"}, admissionv1.Create, admissionv1.Update),
			FailurePolicy: ptr(admissionv1.Fail), SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds: ptr(int32(10)), NamespaceSelector: &metav1.LabelSelector{},
		}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "cert-manager-webhook"}, Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "webhook.cert-manager.io", ClientConfig: ref("cert-manager-webhook", "/validate"),
			Rules:         rule([]string{"cert-manager.io", "acme.cert-manager.io"}, []string{"v1"}, []string{"*/*"}, admissionv1.Create, admissionv1.Update),
			FailurePolicy: ptr(admissionv1.Fail), SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr(int32(30)),
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "cert-manager.io/disable-validation", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"true"}}}},
		}}},
	}
	mutating := []*admissionv1.MutatingWebhookConfiguration{
		{ObjectMeta: metav1.ObjectMeta{Name: "sidecar-injector"}, Webhooks: []admissionv1.MutatingWebhook{{
			Name: "inject.sidecar.example.com", ClientConfig: ref("sidecar-injector", "/inject"),
			Rules:         rule([]string{""}, []string{"v1"}, []string{"pods"}, admissionv1.Create),
			FailurePolicy: ptr(admissionv1.Ignore), SideEffects: &none, AdmissionReviewVersions: []string{"v1"}, TimeoutSeconds: ptr(int32(5)),
			NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"kube-system", webhookNS}}}},
			ReinvocationPolicy: ptr(admissionv1.NeverReinvocationPolicy),
		}}},
	}
	return validating, mutating
}

func intstrPort(p int) intstr.IntOrString { return intstr.FromInt32(int32(p)) }
