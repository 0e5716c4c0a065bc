package versions

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// caseAzureCNIGlibc is the founding incident: nodes on an old OS and
// kubelet when a DaemonSet installed binaries built for a newer glibc.
const caseAzureCNIGlibc = "azure-cni-v2-glibc"

// versionSkewCheck compares every kubelet with the control plane. Beyond
// the supported skew is a policy violation; inside it, pools left on an old
// minor while the control plane moved on are the window in which
// version-keyed add-ons (CNI, CSI, kube-proxy) reach nodes that have not
// been upgraded, which is how the founding Azure CNI incident happened.
func versionSkewCheck() check.Check {
	return check.Check{
		ID:       "version-skew",
		Title:    "Kubelets outside the supported version skew, or pools left behind an upgrade",
		Severity: finding.High,
		Description: "Compares each node's kubelet version, and each kube-proxy's image version, with the API " +
			"server's. Offline, the API server version comes from a recipe dump's version.json or a kubegap " +
			"snapshot, else from the image of a kube-apiserver static pod; without any, the newest kubelet stands " +
			"in as a lower bound and the check is partial (a kubelet newer than the API server cannot be seen). " +
			"Kubelets and kube-proxies newer than the API server, or more than three minor versions older (two " +
			"before 1.25), are unsupported (Kubernetes version skew policy). Pools one or more minors behind while " +
			"other nodes are current show an upgrade in progress or abandoned: add-ons chosen by the control-plane " +
			"version are then already running on nodes with the old node image.",
		Reads: check.Needs(snapshot.Nodes, snapshot.DaemonSets, snapshot.Pods),
		Rules: []check.Rule{
			{ID: ruleKubeletSkew, Summary: "kubelets within the supported skew of the API server, pools not left behind",
				Needs: []snapshot.Resource{snapshot.Nodes}},
			{ID: ruleKubeProxySkew, Summary: "kube-proxy (DaemonSet or static pods) within the supported skew of the API server",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Pods}},
		},
		Cases: check.Detects(caseAzureCNIGlibc),
		Run:   runVersionSkew,
	}
}

const (
	ruleKubeletSkew   = "kubelet-skew"
	ruleKubeProxySkew = "kube-proxy-skew"
)

// maxKubeletSkew is the supported kubelet lag behind the API server:
// three minors since 1.28's policy change, two for kubelets before 1.25.
func maxKubeletSkew(kubelet check.KubeVersion) int {
	if kubelet.Major == 1 && kubelet.Minor < 25 {
		return 2
	}
	return 3
}

type skewClass int

const (
	skewCurrent skewClass = iota
	skewLagging
	skewTooOld
	skewTooNew
)

type skewNode struct {
	node    *corev1.Node
	version check.KubeVersion
	behind  int
}

func runVersionSkew(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	if len(s.Nodes) == 0 {
		if cp, cpEvidence, known := check.ServerVersion(s); known {
			ctx.Skip(ruleKubeletSkew, "the input holds no nodes")
			return kubeProxySkew(s, cp, cpEvidence), nil
		}
		return nil, check.NotEvaluated("the snapshot holds no nodes")
	}
	var nodes []skewNode
	var newest check.KubeVersion
	newestNode := ""
	for i := range s.Nodes {
		n := &s.Nodes[i]
		v, ok := check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion)
		if !ok {
			continue // a node not reporting yet has no version to compare
		}
		nodes = append(nodes, skewNode{node: n, version: v})
		if newestNode == "" || newest.MinorsBehind(v) > 0 {
			newest, newestNode = v, n.Name
		}
	}
	if len(nodes) == 0 {
		return nil, check.NotEvaluated("no node reports a kubelet version")
	}
	cp, cpEvidence, known := check.ServerVersion(s)
	if !known {
		cp = newest
		cpEvidence = fmt.Sprintf("control plane at least %s: the input has no API server version, so the newest kubelet "+
			"(Node %s status.nodeInfo.kubeletVersion) stands in for it", newest.MinorString(), newestNode)
		ctx.Incomplete(ruleKubeletSkew, "no API server version in the input (add version.json from kubectl version -o json): "+
			"skew is measured against the newest kubelet, a lower bound, and kubelets newer than the API server cannot be seen")
	}
	groups := map[string][]skewNode{} // class|pool -> nodes
	current := 0
	for i := range nodes {
		sn := &nodes[i]
		sn.behind = sn.version.MinorsBehind(cp)
		var class skewClass
		switch {
		case sn.behind < 0:
			class = skewTooNew
		case sn.behind > maxKubeletSkew(sn.version):
			class = skewTooOld
		case sn.behind > 0:
			class = skewLagging
		default:
			current++
			continue
		}
		key := strconv.Itoa(int(class)) + "|" + check.NodePool(sn.node)
		groups[key] = append(groups[key], *sn)
	}
	keys := slices.Collect(maps.Keys(groups))
	// Most severe first, then by pool.
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] > keys[j][0]
		}
		return keys[i] < keys[j]
	})
	var out []finding.Finding
	for _, k := range keys {
		class := skewClass(k[0] - '0')
		pool := k[2:]
		out = append(out, skewFinding(class, pool, groups[k], cp, cpEvidence, current, len(nodes)))
	}
	if known {
		out = append(out, kubeProxySkew(s, cp, cpEvidence)...)
	} else {
		ctx.Skip(ruleKubeProxySkew, "no API server version in the input to compare kube-proxy with")
	}
	return out, nil
}

func skewFinding(class skewClass, pool string, nodes []skewNode, cp check.KubeVersion,
	cpEvidence string, current, total int) finding.Finding {
	ptrs := make([]*corev1.Node, len(nodes))
	versions := map[string]int{}
	for i := range nodes {
		ptrs[i] = nodes[i].node
		versions[nodes[i].version.MinorString()]++
	}
	refs, more := check.NodeRefs(ptrs)
	where := "Nodes without a pool label"
	if pool != "" {
		where = "Node pool " + pool
	}
	f := finding.Finding{
		Check:   "version-skew",
		Objects: refs,
		Cases:   []string{caseAzureCNIGlibc},
	}
	f.Evidence = append(f.Evidence, cpEvidence)
	f.AddEvidence(check.NodeValues(ptrs, func(n *corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("status.nodeInfo.kubeletVersion", n.Status.NodeInfo.KubeletVersion)}
	})...)
	kubelets := versionCountsText(versions)
	n := len(nodes)
	kubeletWord := "kubelets"
	if n == 1 {
		kubeletWord = "kubelet"
	}
	switch class {
	case skewTooNew:
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s: %d %s newer than the API server %s", where, n, kubeletWord, cp.MinorString())
		f.Message = fmt.Sprintf("%s runs kubelet %s while the API server is %s. A kubelet must never be newer than the API "+
			"server it talks to; newer kubelets may use APIs the server does not serve%s.", where, kubelets, cp.MinorString(), check.MoreText(more))
		f.Remediation = "Upgrade the control plane before the nodes, or roll these nodes back to the control plane's minor version."
	case skewTooOld:
		f.Severity = finding.High
		f.Title = fmt.Sprintf("%s: %d %s beyond the supported version skew behind %s", where, n, kubeletWord, cp.MinorString())
		f.Message = fmt.Sprintf("%s runs kubelet %s, further behind the control plane at %s than the supported skew "+
			"(three minor versions; two for kubelets before 1.25). The API server no longer promises to work with these "+
			"kubelets, and the control plane cannot be upgraded further until they are%s.", where, kubelets,
			cp.MinorString(), check.MoreText(more))
		f.Remediation = "Upgrade these nodes now, one minor at a time if the provider requires it (drain, then replace or " +
			"upgrade: in-place minor kubelet upgrades are not supported), before any further control-plane upgrade."
	default:
		f.Severity = finding.Low
		state := "no node is on the control plane's minor yet"
		if current > 0 {
			f.Severity = finding.Medium
			state = fmt.Sprintf("%d of %d nodes are already on %s", current, total, cp.MinorString())
		}
		f.Title = fmt.Sprintf("%s lags the control plane (%s): kubelet %s", where, cp.MinorString(), kubelets)
		f.Message = fmt.Sprintf("%s runs kubelet %s while the control plane is at %s and %s. This is within the supported "+
			"skew, but it is the window of an upgrade in progress or abandoned: add-ons whose image follows the control-plane "+
			"version (CNI installers, CSI drivers, kube-proxy) may already run on these nodes, which still have the old node "+
			"image and OS. A CNI installer that assumes the new node image breaks pod sandboxes on exactly these nodes%s.",
			where, kubelets, cp.MinorString(), state, check.MoreText(more))
		f.Remediation = "Finish the upgrade of this pool (node image and kubelet) or replace it with a pool on the current " +
			"version. Until then, check that the DaemonSets the control-plane upgrade changed support this pool's OS image, " +
			"and watch it for FailedCreatePodSandBox events."
	}
	return f
}

// versionCountsText prints "1.34 (3 nodes)" or "1.33 (1 node), 1.34 (2 nodes)".
func versionCountsText(versions map[string]int) string {
	keys := slices.Collect(maps.Keys(versions))
	sort.Slice(keys, func(i, j int) bool {
		a, _ := check.ParseKubeVersion(keys[i])
		b, _ := check.ParseKubeVersion(keys[j])
		return a.MinorsBehind(b) > 0
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		word := "nodes"
		if versions[k] == 1 {
			word = "node"
		}
		parts[i] = fmt.Sprintf("%s (%d %s)", k, versions[k], word)
	}
	return strings.Join(parts, ", ")
}

// kubeProxySkew finds kube-proxy DaemonSets and static kube-proxy pods
// (GKE runs it so) whose image version is newer than the API server, or
// further behind it than the skew policy allows.
func kubeProxySkew(s *snapshot.Snapshot, cp check.KubeVersion, cpEvidence string) []finding.Finding {
	type proxy struct {
		ref       finding.ObjectRef
		container string
		image     string
		v         check.KubeVersion
	}
	var proxies []proxy
	isProxy := func(image string) (check.KubeVersion, bool) {
		if !strings.HasPrefix(path.Base(check.ImageRepository(image)), "kube-proxy") {
			return check.KubeVersion{}, false
		}
		_, tag, _ := check.ImageParts(image)
		return check.ParseKubeVersion(tag)
	}
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			if v, ok := isProxy(c.Image); ok {
				proxies = append(proxies, proxy{finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: ds.Namespace, Name: ds.Name}, c.Name, c.Image, v})
			}
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if len(p.OwnerReferences) > 0 && p.OwnerReferences[0].Kind == "DaemonSet" {
			continue // judged through its DaemonSet
		}
		for _, c := range p.Spec.Containers {
			if v, ok := isProxy(c.Image); ok {
				proxies = append(proxies, proxy{finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, c.Name, c.Image, v})
			}
		}
	}
	var out []finding.Finding
	for _, px := range proxies {
		behind := px.v.MinorsBehind(cp)
		limit := maxKubeletSkew(px.v) // kube-proxy follows the kubelet's numbers
		if behind >= 0 && behind <= limit {
			continue
		}
		f := finding.Finding{
			Check:    "version-skew",
			Severity: finding.High,
			Objects:  []finding.ObjectRef{px.ref},
			Evidence: []string{cpEvidence},
			Cases:    []string{caseAzureCNIGlibc},
		}
		f.AddEvidence(finding.Quote(px.ref, finding.Value(check.ContainerField(px.ref.Kind, "", px.container, "image"), px.image)))
		if behind < 0 {
			f.Title = fmt.Sprintf("kube-proxy %s is newer than the API server %s", px.v.MinorString(), cp.MinorString())
			f.Message = fmt.Sprintf("%s runs kube-proxy %s while the API server is %s. The version skew policy never allows "+
				"kube-proxy to be newer than the API server; it may rely on APIs the server does not serve.", px.ref, px.v.MinorString(), cp.MinorString())
			f.Remediation = "Run the kube-proxy image of the control plane's minor version (managed clusters: the provider's kube-proxy add-on for that version)."
		} else {
			f.Title = fmt.Sprintf("kube-proxy %s is beyond the supported skew behind the API server %s", px.v.MinorString(), cp.MinorString())
			f.Message = fmt.Sprintf("%s runs kube-proxy %s, more than %d minor versions behind the API server at %s. "+
				"The version skew policy does not support it, and the control plane cannot be upgraded further until it is.",
				px.ref, px.v.MinorString(), limit, cp.MinorString())
			f.Remediation = "Upgrade kube-proxy to the control plane's minor version. On managed clusters, check whether the " +
				"provider upgrades the kube-proxy add-on with the control plane or leaves it to you."
		}
		out = append(out, f)
	}
	return out
}
