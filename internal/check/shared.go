package check

import (
	"fmt"
	"path"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// What checks share: image references, Kubernetes versions, object
// references and the limits on how much a finding lists.

// MaxListedObjects is how many objects of one kind a finding names; the
// message says how many more there are.
const MaxListedObjects = 50

// MaxEvidence is how many evidence lines of one kind a finding carries.
const MaxEvidence = 20

// ImageParts splits an image reference into repository, tag and digest.
func ImageParts(image string) (repo, tag, digest string) {
	if i := strings.Index(image, "@"); i >= 0 {
		image, digest = image[:i], image[i+1:]
	}
	slash := strings.LastIndex(image, "/")
	if c := strings.LastIndex(image, ":"); c > slash {
		image, tag = image[:c], image[c+1:]
	}
	return image, tag, digest
}

// ImageRegistry is the registry host of an image: the first path component
// when it looks like a host, docker.io otherwise.
//
// Only the digest is cut off first: a tag follows the last slash, so it
// never changes the first path component (and without a slash the image
// is on docker.io whatever its tag).
func ImageRegistry(image string) string {
	if i := strings.IndexByte(image, '@'); i >= 0 {
		image = image[:i]
	}
	first, _, found := strings.Cut(image, "/")
	if found && (strings.ContainsAny(first, ".:") || first == "localhost") {
		return first
	}
	return "docker.io"
}

// ImageName is the last path element of an image's repository, lowercase:
// "kube-proxy" for registry.k8s.io/kube-proxy:v1.35.0.
func ImageName(image string) string {
	repo, _, _ := ImageParts(image)
	return strings.ToLower(path.Base(repo))
}

// ImageRepository is an image reference without its tag and digest,
// lowercase: how the facts tables (host-binaries.yaml) list repositories
// and how the node checks compare images.
func ImageRepository(ref string) string {
	repo, _, _ := ImageParts(ref)
	return strings.ToLower(repo)
}

// IsTemplated reports whether an image reference is an unrendered
// template placeholder (${VAR}, {{ .Values.x }}, $(VAR), <image_url>)
// rather than an image: manifests from charts, kustomize bases and
// documentation carry them. No image reference holds "<" or ">".
//
// It reads the reference once, byte by byte: checks call it for every
// container of every pod.
func IsTemplated(image string) bool {
	for i := 0; i < len(image); i++ {
		switch image[i] {
		case '<', '>':
			return true
		case '$':
			if i+1 < len(image) && (image[i+1] == '{' || image[i+1] == '(') {
				return true
			}
		case '{':
			if i+1 < len(image) && image[i+1] == '{' {
				return true
			}
		}
	}
	return false
}

// KubeVersion is a Kubernetes major.minor.patch; provider suffixes
// (-eks-036c24b, -gke.1014001, +k3s1) are dropped.
type KubeVersion struct{ Major, Minor, Patch int }

// ParseKubeVersion reads "v1.35.4", "1.35", "v1.33.5-eks-1234".
func ParseKubeVersion(s string) (KubeVersion, bool) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	// Two or three dot-separated numbers, read in place: checks parse
	// every node's kubelet version, and a split allocated per call.
	var v [3]int
	parts := 0
	for more := true; more; parts++ {
		var p string
		p, t, more = strings.Cut(t, ".")
		if parts == len(v) || p == "" {
			return KubeVersion{}, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return KubeVersion{}, false
		}
		v[parts] = n
	}
	if parts < 2 {
		return KubeVersion{}, false
	}
	return KubeVersion{v[0], v[1], v[2]}, true
}

// MinorsBehind is how many minor versions v is older than ref, negative
// when newer; a major change counts as far apart.
func (v KubeVersion) MinorsBehind(ref KubeVersion) int {
	if v.Major != ref.Major {
		return (ref.Major - v.Major) * 100
	}
	return ref.Minor - v.Minor
}

// Less orders versions.
func (v KubeVersion) Less(o KubeVersion) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch < o.Patch
}

func (v KubeVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// MinorString is "1.35".
func (v KubeVersion) MinorString() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// ServerVersion is the control plane's version and where it came from:
// the API server itself (live, a snapshot, a recipe dump's version.json),
// else the oldest kube-apiserver static pod image in the input (the
// narrowest bound when HA instances differ). ok is false when neither is
// there: a check then marks the rules that need it incomplete or skipped.
func ServerVersion(s *snapshot.Snapshot) (v KubeVersion, evidence string, ok bool) {
	if v, ok := ParseKubeVersion(s.Source.ServerVersion); ok {
		return v, fmt.Sprintf("control plane %s (API server version)", s.Source.ServerVersion), true
	}
	EachAPIServerContainer(s, func(p *snapshot.Pod, c *snapshot.Container) {
		_, tag, _ := ImageParts(c.Image)
		pv, good := ParseKubeVersion(tag)
		if good && (!ok || pv.Less(v)) {
			v, ok = pv, true
			evidence = fmt.Sprintf("control plane %s, from the image of Pod kube-system/%s (%s): the input has no API server version",
				tag, p.Name, c.Image)
		}
	})
	return v, evidence, ok
}

// EachAPIServerContainer calls fn for every kube-apiserver container of a
// kube-system Pod: the static pods of a self-managed control plane, whose
// images give its version when the input has no /version.
func EachAPIServerContainer(s *snapshot.Snapshot, fn func(p *snapshot.Pod, c *snapshot.Container)) {
	for i := range s.Pods {
		p := &s.Pods[i]
		if p.Namespace != "kube-system" {
			continue
		}
		for j := range p.Spec.Containers {
			if c := &p.Spec.Containers[j]; ImageName(c.Image) == "kube-apiserver" {
				fn(p, c)
			}
		}
	}
}

// Ref names an object for a finding.
func Ref(apiVersion, kind string, m metav1.Object) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: apiVersion, Kind: kind, Namespace: m.GetNamespace(), Name: m.GetName()}
}

// NodeRef names a node for a finding.
func NodeRef(name string) finding.ObjectRef {
	return finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: name}
}

// NodeRefs names the first MaxListedObjects nodes and says how many are
// left; MoreText turns that count into a message suffix.
func NodeRefs(nodes []*corev1.Node) (refs []finding.ObjectRef, more int) {
	for i, n := range nodes {
		if i == MaxListedObjects {
			return refs, len(nodes) - i
		}
		refs = append(refs, NodeRef(n.Name))
	}
	return refs, 0
}

// MoreText is the message suffix for nodes left off a finding's objects.
func MoreText(more int) string {
	if more == 0 {
		return ""
	}
	return fmt.Sprintf(" (the first %d nodes are listed; %d more are affected)", MaxListedObjects, more)
}

// poolLabels name a node's pool on AKS, EKS managed node groups, GKE and
// Karpenter.
var poolLabels = [...]string{
	"kubernetes.azure.com/agentpool",
	"agentpool",
	"eks.amazonaws.com/nodegroup",
	"cloud.google.com/gke-nodepool",
	"karpenter.sh/nodepool",
}

// NodePool names a node's pool as "label=value", or "" when no known label
// says.
func NodePool(n *corev1.Node) string {
	for _, l := range poolLabels {
		if v := n.Labels[l]; v != "" {
			return l + "=" + v
		}
	}
	return ""
}

// ManagedProvider names the managed service ("AKS", "EKS", "GKE") whose
// control plane a node's providerID and labels point at, or "" for a
// self-managed cluster. Those services own etcd and the node images, and
// their node images carry vendor builds.
func ManagedProvider(n *corev1.Node) string {
	id := n.Spec.ProviderID
	switch {
	case strings.HasPrefix(id, "azure://") && n.Labels["kubernetes.azure.com/cluster"] != "",
		// AKS node images are named AKSUbuntu-..., AKSAzureLinux-...; files
		// exported without providerIDs still carry the label.
		strings.HasPrefix(n.Labels["kubernetes.azure.com/node-image-version"], "AKS"):
		return "AKS"
	case strings.HasPrefix(id, "aws://") && (n.Labels["eks.amazonaws.com/nodegroup"] != "" ||
		n.Labels["eks.amazonaws.com/compute-type"] != "" || n.Labels["karpenter.sh/nodepool"] != ""):
		return "EKS"
	case strings.HasPrefix(id, "gce://") && n.Labels["cloud.google.com/gke-nodepool"] != "":
		return "GKE"
	}
	return ""
}

// ClusterManagedProvider is the managed service (AKS, EKS, GKE) that the
// first node naming one points at, or "" when no node of the input does.
func ClusterManagedProvider(nodes []corev1.Node) string {
	for i := range nodes {
		if p := ManagedProvider(&nodes[i]); p != "" {
			return p
		}
	}
	return ""
}

// Plural is "1 node" or "3 nodes".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// ListText joins up to max items with ", " and says how many more.
func ListText(items []string, max int) string {
	if len(items) <= max {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:max], ", ") + fmt.Sprintf(" and %d more", len(items)-max)
}

// PodReady reports whether the pod's Ready condition is True.
func PodReady(p *snapshot.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// NodeReady is the node's Ready condition: True, False, Unknown, or ""
// when the node is nil or reports no such condition.
func NodeReady(n *corev1.Node) corev1.ConditionStatus {
	if n == nil {
		return ""
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return ""
}

// JobFinished reports whether a Job has completed or failed for good.
func JobFinished(j *batchv1.Job) bool {
	if j.Status.CompletionTime != nil {
		return true
	}
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// StatusReady is the number of ready pods a Deployment's or StatefulSet's
// controller last counted (status.readyReplicas), for standing in for pods
// the input lacks: a count, never a placement. ok is false when the object
// carries no status the controller wrote (observedGeneration unset, as in
// manifests), where an absent readyReplicas would read as 0.
func StatusReady(observedGeneration int64, readyReplicas int32) (int32, bool) {
	if observedGeneration == 0 {
		return 0, false
	}
	return readyReplicas, true
}

// ConfigMapsByKey indexes the ConfigMaps the snapshot holds (only those
// named in snapshot.NamedConfigMaps are ever read) by "namespace/name".
func ConfigMapsByKey(s *snapshot.Snapshot) map[string]*corev1.ConfigMap {
	m := make(map[string]*corev1.ConfigMap, len(s.ConfigMaps))
	for i := range s.ConfigMaps {
		m[s.ConfigMaps[i].Namespace+"/"+s.ConfigMaps[i].Name] = &s.ConfigMaps[i]
	}
	return m
}
