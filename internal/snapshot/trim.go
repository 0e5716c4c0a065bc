package snapshot

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Redacted replaces every environment variable value kubegap reads: it never
// keeps, saves or prints them.
const Redacted = "(redacted)"

// keptAnnotations are the annotations some check reads. All others are
// dropped on load: they are often large (last-applied-configuration holds
// whole manifests, environment values included) and no check needs them.
var keptAnnotations = map[string]bool{
	AnnotationWrittenAs:                              true,
	AnnotationFieldManagers:                          true,
	AnnotationManagedEdits:                           true,
	AnnotationSerializedBytes:                        true,
	AnnotationAppliedReplicas:                        true,
	"k8s.v1.cni.cncf.io/networks":                    true, // Multus attachments of a pod
	"kubernetes.io/config.mirror":                    true, // static (mirror) pods
	"cluster-autoscaler.kubernetes.io/safe-to-evict": true,
	"iam.amazonaws.com/role":                         true, // the role a pod asks kiam or kube2iam for
	// The version the loader converted an object from: checks apply that
	// version's defaults (a v1beta1 webhook's failurePolicy, a v1beta1
	// budget's empty selector).
	OriginalAPIVersionAnnotation: true,
	IgnoreAnnotation:             true, // suppressions (internal/suppress)
	IgnoreReasonAnnotation:       true,
	// Ingress class binding: the class an Ingress asks for by annotation
	// (before, and alongside, spec.ingressClassName), and the markers of
	// the default IngressClass and StorageClass.
	"kubernetes.io/ingress.class":                 true,
	"ingressclass.kubernetes.io/is-default-class": true,
	"storageclass.kubernetes.io/is-default-class": true,
	// Node-local volumes (node-disk-drift): the provisioner that made a
	// PersistentVolume, and OpenEBS Local PV Hostpath's StorageClass
	// settings (base path and quota), a short YAML list.
	"pv.kubernetes.io/provisioned-by": true,
	"cas.openebs.io/config":           true,
	// A Strimzi Kafka's metadata mode as asked for: disabled (ZooKeeper),
	// migration, enabled (KRaft) or rollback.
	"strimzi.io/kraft": true,
	// k3s's deploy controller applies its packaged manifests with an Addon
	// as owner; internal/owner reads these to tell k3s's own objects
	// (owner.KeptAnnotations).
	"objectset.rio.cattle.io/owner-gvk":  true,
	"objectset.rio.cattle.io/owner-name": true,
	// A k3s node's flannel backend, as flannel records it, and the k3s
	// arguments it was started with, of which only the ones checks read
	// are kept (K3sNodeArgsKept): the upgrade preflight reads the backend
	// a k3s release removes, etcd-capacity-signals an etcd-arg quota.
	"flannel.alpha.coreos.com/backend-type": true,
	AnnotationK3sNodeArgs:                   true,
	// The release an operator stamped on its CRDs (crd-operator-version-skew):
	// the Prometheus Operator's on the monitoring.coreos.com CRDs.
	"operator.prometheus.io/version": true,
	// Cluster API marks the Nodes of the Machines it made with their
	// Machine and the Machine's owner kind (KubeadmControlPlane on a
	// control-plane node): certificate-expiry reads them to date the
	// one-year kubeadm certificates of such a node from its creation.
	"cluster.x-k8s.io/machine":    true,
	"cluster.x-k8s.io/owner-kind": true,
}

// presenceAnnotations are kept with their value replaced by Redacted:
// checks read only that they are there. ingress-nginx's snippet
// annotations hold raw NGINX configuration, which can carry credentials
// (an Authorization header), and ingress-nginx-snippet-gates needs only
// which Ingresses use them.
var presenceAnnotations = map[string]bool{
	"nginx.ingress.kubernetes.io/configuration-snippet": true,
	"nginx.ingress.kubernetes.io/server-snippet":        true,
	"nginx.ingress.kubernetes.io/stream-snippet":        true,
	"nginx.ingress.kubernetes.io/auth-snippet":          true,
	// RKE (RKE1) writes a node's addresses here on every node it
	// provisions (rancher/rke k8s/node.go); addon-end-of-life needs only
	// that they are there, so the addresses are not kept.
	"rke.cattle.io/internal-ip": true,
	"rke.cattle.io/external-ip": true,
}

// AnnotationK3sNodeArgs is where k3s records the arguments a node's k3s
// was started with, as a JSON list ("--flag=value" written as two
// elements, token and datastore values replaced by ********).
const AnnotationK3sNodeArgs = "k3s.io/node-args"

// K3sNodeArgsKept reduces a k3s.io/node-args value to what checks read:
// the subcommand (server or agent), --flannel-backend with its value and
// --etcd-arg quota-backend-bytes=N. Any other argument (addresses, labels,
// an S3 option k3s does not redact) is dropped as the node is read, so no
// report or snapshot carries it. A value that is not a JSON list of
// strings is dropped whole.
func K3sNodeArgsKept(v string) (string, bool) {
	var args []string
	if json.Unmarshal([]byte(v), &args) != nil {
		return "", false
	}
	kept := []string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case i == 0 && (a == "server" || a == "agent"):
			kept = append(kept, a)
		case a == "--flannel-backend" && i+1 < len(args):
			kept = append(kept, a, args[i+1])
			i++
		case a == "--etcd-arg" && i+1 < len(args) && strings.HasPrefix(args[i+1], "quota-backend-bytes="):
			kept = append(kept, a, args[i+1])
			i++
		}
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// externalDNSRouting are external-dns's AWS routing annotations, under the
// prefix external-dns reads up to v0.21 and the one it reads from v0.22:
// an Ingress or Service whose set-identifier comes without a routing policy
// makes Route 53 reject its change (internal/checks/ingress reads them).
var externalDNSRouting = []string{"set-identifier", "aws-weight", "aws-region", "aws-failover",
	"aws-geolocation-continent-code", "aws-geolocation-country-code", "aws-geolocation-subdivision-code",
	"aws-geoproximity-region", "aws-geoproximity-local-zone-group", "aws-geoproximity-coordinates",
	"aws-multi-value-answer"}

func init() {
	for _, prefix := range []string{"external-dns.alpha.kubernetes.io/", "external-dns.kubernetes.io/"} {
		for _, k := range externalDNSRouting {
			keptAnnotations[prefix+k] = true
		}
	}
}

// AnnotationWrittenAs is an annotation kubegap adds as it reads an object:
// the API versions, other than the one it was read through, that its
// managedFields and last-applied-configuration show it was written with
// ("extensions/v1beta1,apps/v1beta2"), comma-separated and sorted. Those
// fields themselves are dropped; a client that still writes through a
// version the next release removes is what the removed-API check looks for.
const AnnotationWrittenAs = "kubegap.dev/written-as"

// AnnotationFieldManagers and AnnotationManagedEdits are annotations
// kubegap adds as it reads the objects of EKS's CoreDNS add-on
// (kube-system/coredns, the ConfigMap and the Deployment), from their
// managedFields, which it then drops. AnnotationFieldManagers lists every
// field manager, sorted and comma-separated ("eks,kubectl-edit"); it is
// absent when the object came without managedFields (kubectl get omits
// them unless asked). AnnotationManagedEdits lists, of the fields the
// add-on manages that checks watch (data.Corefile, spec.replicas), those
// a manager other than EKS's or a Kubernetes control-plane component's
// owns, as field=manager pairs ("data.Corefile=kubectl-edit"). EKS marks
// the fields it manages with the manager eks, and an edit of one may be
// overwritten when the add-on is updated (EKS user guide, "Determine
// fields you can customize for Amazon EKS add-ons").
const (
	AnnotationFieldManagers = "kubegap.dev/field-managers"
	AnnotationManagedEdits  = "kubegap.dev/managed-field-edits"
)

// managedFieldsWatched are the objects whose field managers are noted,
// and per object the field paths (as managedFields spells them) that
// AnnotationManagedEdits reports.
var managedFieldsWatched = map[string][][2]string{
	"kube-system/coredns": {{"f:data", "f:Corefile"}, {"f:spec", "f:replicas"}},
}

// noteFieldManagers records AnnotationFieldManagers and
// AnnotationManagedEdits on the objects named in managedFieldsWatched.
func noteFieldManagers(m metav1.Object) {
	watched, ok := managedFieldsWatched[m.GetNamespace()+"/"+m.GetName()]
	mf := m.GetManagedFields()
	if !ok || len(mf) == 0 {
		return
	}
	managers := map[string]bool{}
	var edits []string
	for _, e := range mf {
		managers[e.Manager] = true
		if e.Manager == "eks" || strings.HasPrefix(e.Manager, "eks-") || strings.HasPrefix(e.Manager, "kube-") || e.FieldsV1 == nil {
			continue
		}
		var fields map[string]map[string]json.RawMessage
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &fields) != nil {
			continue
		}
		for _, w := range watched {
			if _, owns := fields[w[0]][w[1]]; owns {
				edits = append(edits, strings.TrimPrefix(w[0], "f:")+"."+strings.TrimPrefix(w[1], "f:")+"="+e.Manager)
			}
		}
	}
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationFieldManagers] = strings.Join(slices.Sorted(maps.Keys(managers)), ",")
	if len(edits) > 0 {
		slices.Sort(edits)
		a[AnnotationManagedEdits] = strings.Join(slices.Compact(edits), ",")
	}
	m.SetAnnotations(a)
}

// AnnotationSerializedBytes records on a custom resource the length in
// bytes of its compact JSON as the API served it, before trimming (with
// its managedFields, status and every annotation): trimming keeps a few
// fields of most custom resources, so the size that counts against the
// API server's request limit and etcd's is known only at reading time.
// The loader measures an object read from a dump and keeps the value of an
// object that already carries it (one written by an earlier kubegap, or a
// fixture standing for an object too large to write out); the objects of
// a kubegap snapshot file were trimmed when saved, so one without the
// annotation there has no recorded size, which a check reads as unknown.
const AnnotationSerializedBytes = "kubegap.dev/serialized-bytes"

// SerializedBytes is the size AnnotationSerializedBytes records on m, and
// false when m has none (or an unreadable one): unknown, never small.
func SerializedBytes(m metav1.Object) (int64, bool) {
	v, ok := m.GetAnnotations()[AnnotationSerializedBytes]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// noteSerializedBytes records n as m's AnnotationSerializedBytes unless m
// already carries one.
func noteSerializedBytes(m metav1.Object, n int) {
	a := m.GetAnnotations()
	if _, ok := a[AnnotationSerializedBytes]; ok || n <= 0 {
		return
	}
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationSerializedBytes] = strconv.Itoa(n)
	m.SetAnnotations(a)
}

// compactJSONLen is the length of raw, one JSON value, without the
// whitespace between its tokens: what the API server serves for a custom
// resource, whatever indentation the dump was written with.
func compactJSONLen(raw []byte) int {
	n, inString, escaped := 0, false, false
	for _, c := range raw {
		if inString {
			n++
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			inString = true
		}
		n++
	}
	return n
}

// noteWrittenAs records AnnotationWrittenAs on m from its managedFields and
// last-applied configuration, before trimMeta drops them. own is the
// apiVersion the object was read through.
func noteWrittenAs(m metav1.Object, own string) {
	seen := map[string]bool{}
	for _, f := range m.GetManagedFields() {
		if f.APIVersion != "" && f.APIVersion != own {
			seen[f.APIVersion] = true
		}
	}
	applied := ""
	for _, f := range m.GetManagedFields() {
		if f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == "" && f.FieldsV1 != nil &&
			strings.Contains(f.FieldsV1.GetRawString(), `"f:replicas"`) {
			applied = "server-side apply by " + f.Manager
		}
	}
	if la := m.GetAnnotations()[corev1.LastAppliedConfigAnnotation]; la != "" {
		var tm struct {
			APIVersion string `json:"apiVersion"`
			Spec       struct {
				Replicas *int64 `json:"replicas"`
			} `json:"spec"`
		}
		if json.Unmarshal([]byte(la), &tm) == nil {
			if tm.APIVersion != "" && tm.APIVersion != own {
				seen[tm.APIVersion] = true
			}
			if tm.Spec.Replicas != nil {
				applied = "last-applied-configuration spec.replicas " + strconv.FormatInt(*tm.Spec.Replicas, 10)
			}
		}
	}
	if len(seen) == 0 && applied == "" {
		return
	}
	a := m.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if len(seen) > 0 {
		a[AnnotationWrittenAs] = strings.Join(slices.Sorted(maps.Keys(seen)), ",")
	}
	if applied != "" {
		a[AnnotationAppliedReplicas] = applied
	}
	m.SetAnnotations(a)
}

// AnnotationAppliedReplicas is an annotation kubegap adds as it reads an
// object whose applied configuration declares spec.replicas: the
// last-applied-configuration's value, or the manager whose server-side
// apply owns the field. A later apply of that configuration (a GitOps
// sync, a re-run pipeline) sets the count back, whatever an autoscaler
// chose (hpa-replicas-applied).
const AnnotationAppliedReplicas = "kubegap.dev/applied-replicas"

func schemaGVK(r Resource) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// trimMeta drops what no check reads from object metadata.
func trimMeta(m metav1.Object) {
	noteFieldManagers(m)
	m.SetManagedFields(nil)
	if a := m.GetAnnotations(); len(a) > 0 {
		m.SetAnnotations(keptAnnotationsOf(a))
	}
}

// keptAnnotationsOf returns the annotations of a that some check reads, or
// nil.
func keptAnnotationsOf(a map[string]string) map[string]string {
	var kept map[string]string
	for k, v := range a {
		if presenceAnnotations[k] {
			if kept == nil {
				kept = map[string]string{}
			}
			kept[k] = Redacted
			continue
		}
		if keptAnnotations[k] {
			if k == AnnotationK3sNodeArgs {
				var ok bool
				if v, ok = K3sNodeArgsKept(v); !ok {
					continue
				}
			}
			if kept == nil {
				kept = map[string]string{}
			}
			kept[k] = v
		}
	}
	return kept
}

// trimPodSpec redacts environment variable values.
func trimPodSpec(spec *corev1.PodSpec) {
	for i := range spec.InitContainers {
		redactEnv(spec.InitContainers[i].Env)
	}
	for i := range spec.Containers {
		redactEnv(spec.Containers[i].Env)
	}
	for i := range spec.EphemeralContainers {
		redactEnv(spec.EphemeralContainers[i].Env)
	}
}

func redactEnv(env []corev1.EnvVar) {
	for i := range env {
		if env[i].Value != "" {
			env[i].Value = keptEnvValue(env[i].Name, env[i].Value)
		}
	}
}

// keptEnvValues are the environment variables whose literal value is kept
// when it is one of a closed set of words (compared without case): a
// selector between modes, which cannot carry a secret. Any other value,
// and every other variable's, is Redacted.
var keptEnvValues = map[string][]string{
	// calico-node's iptables backend (dataplane-node-compat).
	"FELIX_IPTABLESBACKEND": {"auto", "legacy", "nft"},
}

// keptEnvValue is v when keptEnvValues allows it for name, else Redacted.
func keptEnvValue(name, v string) string {
	if slices.Contains(keptEnvValues[name], strings.ToLower(v)) {
		return v
	}
	return Redacted
}

// trimNode drops the image list, the largest part of a Node's status, which
// no check reads, and shares what the nodes of a pool repeat: capacity,
// allocatable, the node info's versions, the conditions' words. At 5,000
// nodes a node held 3.7 KB; the capacity and allocatable lists were a
// third of it.
func trimNode(n *corev1.Node, in *interner) {
	n.Status.Images = nil
	n.Status.Capacity = in.resourceList(n.Status.Capacity)
	n.Status.Allocatable = in.resourceList(n.Status.Allocatable)
	ni := &n.Status.NodeInfo
	for _, f := range []*string{&ni.KernelVersion, &ni.OSImage, &ni.ContainerRuntimeVersion,
		&ni.KubeletVersion, &ni.OperatingSystem, &ni.Architecture} {
		*f = in.str(*f)
	}
	for i := range n.Status.Conditions {
		c := &n.Status.Conditions[i]
		c.Type, c.Status = corev1.NodeConditionType(in.str(string(c.Type))), corev1.ConditionStatus(in.str(string(c.Status)))
		c.Reason, c.Message = in.str(c.Reason), in.str(c.Message)
	}
}

// shareWorkload shares what workloads repeat in their metadata and spec
// outside the pod template: labels and the selector.
func shareWorkload(m *metav1.ObjectMeta, sel **metav1.LabelSelector, in *interner) {
	m.Labels = in.labelSet(m.Labels)
	m.Namespace = in.str(m.Namespace)
	*sel = in.labelSelector(*sel)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind = in.str(o.APIVersion), in.str(o.Kind)
		o.Controller, o.BlockOwnerDeletion = in.boolPtr(o.Controller), in.boolPtr(o.BlockOwnerDeletion)
	}
}

// shareResources shares a template container's resource lists.
func shareResources(r corev1.ResourceRequirements, in *interner) corev1.ResourceRequirements {
	r.Requests, r.Limits = in.resourceList(r.Requests), in.resourceList(r.Limits)
	return r
}

// shareProbe returns a probe equal to p, shared.
func shareProbe(p *corev1.Probe, in *interner) *corev1.Probe {
	if p == nil {
		return nil
	}
	return sharedJSON(in, "probe", p)
}

// trimContainers keeps of a template's containers the name, image, pull
// policy, environment variable names (with their ConfigMap key references)
// and the mounts of the hostPath volumes named in hostPaths.
func trimContainers(cs []corev1.Container, hostPaths map[string]bool, in *interner) []corev1.Container {
	if len(cs) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: in.str(c.Name), Image: in.str(c.Image),
			ImagePullPolicy: corev1.PullPolicy(in.str(string(c.ImagePullPolicy))),
			VolumeMounts:    hostPathMounts(c.VolumeMounts, hostPaths, in)}
		if len(c.Env) > 0 {
			env := make([]corev1.EnvVar, len(c.Env))
			for j, e := range c.Env {
				env[j].Name = in.str(e.Name)
				if e.Value != "" {
					env[j].Value = in.str(keptEnvValue(e.Name, e.Value))
				}
				// A ConfigMap key reference is kept: it names where a
				// setting lives (gitops-deletion-guard resolves the Argo
				// CD ApplicationSet controller's policy through it), and
				// ConfigMaps hold no secrets. Other sources (a Secret, a
				// field) are dropped and the value stands as Redacted, so
				// that a reader does not take the variable for an empty
				// literal.
				if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
					ref := e.ValueFrom.ConfigMapKeyRef
					env[j].ValueFrom = &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: in.str(ref.Name)},
						Key:                  in.str(ref.Key), Optional: ref.Optional}}
				} else if e.ValueFrom != nil {
					env[j].Value = Redacted
				}
			}
			out[i].Env = sharedJSON(in, "env", env)
		}
	}
	return out
}

// hostPathMounts keeps the mounts of the volumes named in hostPaths, and
// any mount at /tmp.
func hostPathMounts(ms []corev1.VolumeMount, hostPaths map[string]bool, in *interner) []corev1.VolumeMount {
	var out []corev1.VolumeMount
	for _, m := range ms {
		// A mount at /tmp is kept whatever its volume: CoreDNS 1.3.1 exits
		// when it cannot write its log file there, and a volume at /tmp is
		// the workaround cluster-dns-known-bad-release looks for.
		if hostPaths[m.Name] || strings.TrimSuffix(m.MountPath, "/") == "/tmp" {
			out = append(out, corev1.VolumeMount{Name: in.str(m.Name),
				MountPath: in.str(m.MountPath), SubPath: in.str(m.SubPath), ReadOnly: m.ReadOnly})
		}
	}
	return out
}

// running is the state of every running container: read only.
var running = &corev1.ContainerStateRunning{}

func trimState(s corev1.ContainerState, in *interner) corev1.ContainerState {
	if s.Running != nil {
		s.Running = running
	}
	if s.Waiting != nil {
		s.Waiting = &corev1.ContainerStateWaiting{Reason: in.str(s.Waiting.Reason), Message: s.Waiting.Message}
	}
	if s.Terminated != nil {
		t := *s.Terminated
		t.Reason, t.ContainerID = in.str(t.Reason), ""
		s.Terminated = &t
	}
	return s
}

// deviceSecurity keeps of a container's security context only privileged
// and the added capabilities: runtime-default-change-exposure reads them
// to tell a container that relies on the runtime's default device rules
// from one that is granted everything. Nil when neither is set.
func deviceSecurity(sc *corev1.SecurityContext) *corev1.SecurityContext {
	if sc == nil || sc.Privileged == nil && (sc.Capabilities == nil || len(sc.Capabilities.Add) == 0) {
		return nil
	}
	out := &corev1.SecurityContext{Privileged: sc.Privileged}
	if sc.Capabilities != nil && len(sc.Capabilities.Add) > 0 {
		out.Capabilities = &corev1.Capabilities{Add: sc.Capabilities.Add}
	}
	return out
}

// trimReplicaSet keeps of a ReplicaSet's pod template only the labels and
// the containers' names, images and pull policies. The template repeats
// its Deployment's, which keeps it whole; checks read a ReplicaSet for its
// owner, replicas and status. Large clusters hold one per Deployment
// revision kept (ten by default), so this is the second largest saving
// after pods.
func trimReplicaSet(rs *appsv1.ReplicaSet, in *interner) {
	t := &rs.Spec.Template
	t.ObjectMeta = metav1.ObjectMeta{Labels: in.labelSet(t.Labels)}
	t.Spec = corev1.PodSpec{
		InitContainers: shareContainers(trimContainers(t.Spec.InitContainers, nil, in), in),
		Containers:     shareContainers(trimContainers(t.Spec.Containers, nil, in), in),
	}
	shareWorkload(&rs.ObjectMeta, &rs.Spec.Selector, in)
}

// trimWorkloadTemplate keeps of a Deployment's or StatefulSet's pod
// template what checks read or plausibly will: labels; scheduling (node
// name and selector, affinity, tolerations, priority class, runtime class,
// service account, host network, topology spread); hostPath volumes; and per
// container its name, image, pull policy, resources, command and arguments,
// probes, hostPath mounts and environment variable names (values
// redacted, ConfigMap key references kept); privileged and the added capabilities of its security
// context (what decides the devices and network rights a container gets);
// the pod's termination grace period; and, for a container
// with a preStop hook, the marker PreStopKept. Ports, the rest of the
// security contexts, the hooks themselves, other volumes and where
// environment values come from (other than a ConfigMap key) are dropped:
// at 7,000 Deployments the whole templates held 60 MB. DaemonSets keep
// their whole templates: checks read far more of them, and there are few.
func trimWorkloadTemplate(t *corev1.PodTemplateSpec, in *interner) {
	spec := &t.Spec
	hostPaths := map[string]bool{}
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			hostPaths[v.Name] = true
			volumes = append(volumes, corev1.Volume{Name: in.str(v.Name),
				VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: in.str(v.HostPath.Path), Type: v.HostPath.Type}}})
		}
	}
	kept := corev1.PodSpec{
		NodeName: in.str(spec.NodeName), NodeSelector: in.labelSet(spec.NodeSelector),
		Tolerations: spec.Tolerations, RuntimeClassName: spec.RuntimeClassName,
		PriorityClassName: in.str(spec.PriorityClassName), Priority: spec.Priority,
		ServiceAccountName: in.str(spec.ServiceAccountName), HostNetwork: spec.HostNetwork,
		Volumes:        volumes,
		InitContainers: trimContainers(spec.InitContainers, hostPaths, in),
		Containers:     trimContainers(spec.Containers, hostPaths, in),
	}
	if spec.Affinity != nil {
		kept.Affinity = sharedJSON(in, "affinity", spec.Affinity)
	}
	if len(spec.Tolerations) > 0 {
		kept.Tolerations = sharedJSON(in, "tolerations", spec.Tolerations)
	}
	for i, c := range spec.InitContainers {
		kept.InitContainers[i].Resources = shareResources(c.Resources, in)
		kept.InitContainers[i].SecurityContext = deviceSecurity(c.SecurityContext)
		kept.InitContainers[i].Command, kept.InitContainers[i].Args = c.Command, c.Args
	}
	for i, c := range spec.Containers {
		kept.Containers[i].Resources = shareResources(c.Resources, in)
		kept.Containers[i].SecurityContext = deviceSecurity(c.SecurityContext)
		// Probes and arguments: the probe check reads them, and add-on
		// checks read controller flags (--watch-ingress-without-class).
		kept.Containers[i].Command, kept.Containers[i].Args = c.Command, c.Args
		kept.Containers[i].LivenessProbe = shareProbe(c.LivenessProbe, in)
		kept.Containers[i].ReadinessProbe = shareProbe(c.ReadinessProbe, in)
		kept.Containers[i].StartupProbe = shareProbe(c.StartupProbe, in)
		if c.Lifecycle != nil && c.Lifecycle.PreStop != nil {
			kept.Containers[i].Lifecycle = PreStopKept
		}
	}
	// The grace period bounds how long a terminating pod may keep serving
	// while load balancers drop it.
	kept.TerminationGracePeriodSeconds = spec.TerminationGracePeriodSeconds
	if len(spec.TopologySpreadConstraints) > 0 {
		kept.TopologySpreadConstraints = sharedJSON(in, "spread", spec.TopologySpreadConstraints)
	}
	kept.InitContainers, kept.Containers = shareContainers(kept.InitContainers, in), shareContainers(kept.Containers, in)
	*spec = kept
	t.ObjectMeta = metav1.ObjectMeta{Labels: in.labelSet(t.Labels), Annotations: keptAnnotationsOf(t.Annotations)}
}

// PreStopKept stands, in a trimmed template, for a container's lifecycle
// that has a preStop hook: the hook is dropped (its command can be long),
// only the fact that there is one is kept, in one shared value that
// readers must not change.
var PreStopKept = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}

// keepNamedConfigMap guards the rule that kubegap holds only the ConfigMaps
// it names: one from files that is not among NamedConfigMaps keeps its
// name but no data, so that no setting or value of another reaches a
// report or a snapshot.
func keepNamedConfigMap(cm *corev1.ConfigMap, _ *interner) {
	if !slices.Contains(NamedConfigMaps, cm.Namespace+"/"+cm.Name) {
		cm.Data, cm.BinaryData = nil, nil
		return
	}
	if prefix, partial := keptConfigMapKeyPrefix[cm.Namespace+"/"+cm.Name]; partial {
		for k := range cm.Data {
			if !strings.HasPrefix(k, prefix) {
				delete(cm.Data, k)
			}
		}
		cm.BinaryData = nil
	}
}

// keptConfigMapKeyPrefix limits a named ConfigMap that also holds settings
// no check reads to the keys that start with its prefix: Argo CD's
// argocd-cmd-params-cm can carry other components' parameters, such as
// otlp.headers, which may hold a collector's credentials, and
// gitops-deletion-guard reads only the ApplicationSet controller's keys.
var keptConfigMapKeyPrefix = map[string]string{
	"argocd/argocd-cmd-params-cm": "applicationsetcontroller.",
}

// trimCustom drops what no check reads from custom resources of some
// kinds: a CRD keeps its names, versions (without schemas) and conversion
// settings; its OpenAPI schemas are most of its size.
func trimCustom(u *unstructured.Unstructured) {
	if g, k := u.GroupVersionKind().Group, u.GetKind(); g == ArgoApplications.Group &&
		(k == ArgoApplications.Kind || k == ArgoApplicationSets.Kind) {
		trimArgo(u)
		return
	}
	if u.GroupVersionKind().Group == StrimziKafkas.Group && u.GetKind() == StrimziKafkas.Kind {
		trimStrimziKafka(u)
		return
	}
	if u.GroupVersionKind().Group == OpenShiftNodeConfigs.Group && u.GetKind() == OpenShiftNodeConfigs.Kind {
		trimOpenShiftNodeConfig(u)
		return
	}
	if g, k := u.GroupVersionKind().Group, u.GetKind(); g == KedaTriggerAuthentications.Group &&
		(k == KedaTriggerAuthentications.Kind || k == KedaClusterTriggerAuthentications.Kind) {
		trimKedaAuth(u)
		return
	}
	if u.GroupVersionKind().Group == CertificateSigningRequests.Group && u.GetKind() == CertificateSigningRequests.Kind {
		trimCSR(u)
		return
	}
	if u.GetKind() != CustomResourceDefinitions.Kind || u.GroupVersionKind().Group != CustomResourceDefinitions.Group {
		return
	}
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	for i, v := range versions {
		if m, ok := v.(map[string]any); ok {
			delete(m, "schema")
			versions[i] = m
		}
	}
	if versions != nil {
		_ = unstructured.SetNestedSlice(u.Object, versions, "spec", "versions")
	}
	unstructured.RemoveNestedField(u.Object, "spec", "validation")
	unstructured.RemoveNestedField(u.Object, "status", "acceptedNames")
}

// trimArgo keeps of an Argo CD Application its destination, sync policy and
// revision history limit,
// and of an ApplicationSet its generators, strategy, sync policy and its
// template's destination and sync policy. Sources (inline Helm values can
// be large) and status (every managed resource, the sync history) go.
func trimArgo(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	delete(u.Object, "operation")
	spec, _ := u.Object["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if u.GetKind() == ArgoApplications.Kind {
		u.Object["spec"] = keepKeys(spec, "destination", "syncPolicy", "project", "revisionHistoryLimit")
	} else {
		kept := keepKeys(spec, "generators", "strategy", "syncPolicy", "goTemplate", "templatePatch")
		if t, ok := spec["template"].(map[string]any); ok {
			tmpl := map[string]any{}
			if m, ok := t["metadata"]; ok {
				tmpl["metadata"] = m
			}
			if ts, ok := t["spec"].(map[string]any); ok {
				tmpl["spec"] = keepKeys(ts, "destination", "syncPolicy", "project")
			}
			kept["template"] = tmpl
		}
		u.Object["spec"] = kept
	}
}

func keepKeys(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// trimOpenShiftNodeConfig keeps of OpenShift's node configuration only
// spec.cgroupMode; its status and the other settings go.
func trimOpenShiftNodeConfig(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	spec, _ := u.Object["spec"].(map[string]any)
	if spec == nil {
		return
	}
	u.Object["spec"] = keepKeys(spec, "cgroupMode")
}

// trimStrimziKafka keeps of a Strimzi Kafka what says where its metadata
// live: whether it declares a ZooKeeper ensemble (spec.zookeeper, reduced
// to its replicas), the Kafka version, and status.kafkaMetadataState with
// the conditions' type, status and reason. Listeners, authentication,
// broker config and the rest of the spec are dropped.
func trimStrimziKafka(u *unstructured.Unstructured) {
	kept := map[string]any{}
	if zk, found, _ := unstructured.NestedMap(u.Object, "spec", "zookeeper"); found {
		z := map[string]any{}
		if r, ok := zk["replicas"]; ok {
			z["replicas"] = r
		}
		kept["zookeeper"] = z
	}
	if v, found, _ := unstructured.NestedString(u.Object, "spec", "kafka", "version"); found {
		kept["kafka"] = map[string]any{"version": v}
	}
	status := map[string]any{}
	if st, found, _ := unstructured.NestedString(u.Object, "status", "kafkaMetadataState"); found {
		status["kafkaMetadataState"] = st
	}
	if conds, found, _ := unstructured.NestedSlice(u.Object, "status", "conditions"); found {
		var out []any
		for _, c := range conds {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			k := map[string]any{}
			for _, f := range []string{"type", "status", "reason"} {
				if v, ok := m[f]; ok {
					k[f] = v
				}
			}
			out = append(out, k)
		}
		status["conditions"] = out
	}
	u.Object["spec"] = kept
	if len(status) > 0 {
		u.Object["status"] = status
	} else {
		delete(u.Object, "status")
	}
}

// trimKedaAuth keeps of a KEDA TriggerAuthentication or
// ClusterTriggerAuthentication only spec.podIdentity.provider, the
// authentication mode keda-pod-identity-removal reads. Secret references,
// environment names, vault and cloud settings and the status go.
func trimKedaAuth(u *unstructured.Unstructured) {
	delete(u.Object, "status")
	spec := map[string]any{}
	if p, found, _ := unstructured.NestedString(u.Object, "spec", "podIdentity", "provider"); found {
		spec["podIdentity"] = map[string]any{"provider": p}
	}
	u.Object["spec"] = spec
}

// trimCSR keeps of a CertificateSigningRequest who asked (spec.username)
// for which signer (spec.signerName), and its conditions' type, status and
// reason. The PEM request, the issued certificate, extra attributes, groups
// and usages go.
func trimCSR(u *unstructured.Unstructured) {
	spec := map[string]any{}
	for _, f := range []string{"signerName", "username"} {
		if v, found, _ := unstructured.NestedString(u.Object, "spec", f); found {
			spec[f] = v
		}
	}
	u.Object["spec"] = spec
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []any
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		k := map[string]any{}
		for _, f := range []string{"type", "status", "reason"} {
			if v, ok := m[f]; ok {
				k[f] = v
			}
		}
		out = append(out, k)
	}
	if len(out) > 0 {
		u.Object["status"] = map[string]any{"conditions": out}
	} else {
		delete(u.Object, "status")
	}
}
