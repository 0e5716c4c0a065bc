package runtime

// The vxlan-checksum-offload rule of dataplane-node-compat: Flannel, Canal and
// Calico VXLAN overlays on nodes whose kernel and kube-proxy (else kubelet)
// together break the tunnel's checksums, with the flannel backend and Calico
// IPPools it reads.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// vxlanOffloadRow: VXLAN overlays on kernels before FixedKernel, with a
// kube-proxy from KubeProxyFrom on that lacks the unmark-before-masquerade
// change (first patch release per minor in KubeProxyFixed).
type vxlanOffloadRow struct {
	dataplaneRow
	FixedKernel    string   `json:"fixedKernel"`
	KubeProxyFrom  string   `json:"kubeProxyFrom"`
	KubeProxyFixed []string `json:"kubeProxyFixed"`
	CalicoImage    string   `json:"calicoImage"`
	CalicoFixed    []string `json:"calicoFixed"`
	fixed, from    check.KubeVersion
	kpFixed        []check.KubeVersion
	calicoRE       *regexp.Regexp
	calicoFixed    []check.KubeVersion
}

func (r *vxlanOffloadRow) parse() error {
	if err := rowOK(r.dataplaneRow); err != nil {
		return err
	}
	var ok bool
	if r.fixed, ok = check.ParseKubeVersion(r.FixedKernel); !ok {
		return dataErr("vxlanOffload.fixedKernel", r.FixedKernel)
	}
	if r.from, ok = check.ParseKubeVersion(r.KubeProxyFrom); !ok {
		return dataErr("vxlanOffload.kubeProxyFrom", r.KubeProxyFrom)
	}
	if r.kpFixed, ok = ascending(r.KubeProxyFixed); !ok {
		return dataErr("vxlanOffload.kubeProxyFixed (ascending versions)", r.KubeProxyFixed)
	}
	if r.calicoFixed, ok = ascending(r.CalicoFixed); !ok {
		return dataErr("vxlanOffload.calicoFixed (ascending versions)", r.CalicoFixed)
	}
	var err error
	if r.calicoRE, err = regexp.Compile(r.CalicoImage); err != nil || r.CalicoImage == "" {
		return dataErr("vxlanOffload.calicoImage", r.CalicoImage)
	}
	return nil
}

// kubeProxyAffected: from r.from on, and before the fix of v's minor; a
// minor newer than the last listed carries the fix, an older one none.
func (r *vxlanOffloadRow) kubeProxyAffected(v check.KubeVersion) bool {
	return !v.Less(r.from) && !carriesFix(v, r.kpFixed)
}

// flannelBackend reads the backend type from the net-conf.json of the
// ConfigMap a flannel DaemonSet mounts; ok is false, with a note on the
// rule, when that ConfigMap is not in the input.
func flannelBackend(ctx *check.Context, fl flannelDS) (backend, from string, ok bool) {
	ns := fl.ds.Namespace
	if fl.configMap == "" {
		ctx.Incomplete(ruleVXLANOffload, "DaemonSet %s/%s mounts no ConfigMap at %s; its backend is not visible",
			ns, fl.ds.Name, flannelConfigDir)
		return "", "", false
	}
	for i := range ctx.Snapshot.ConfigMaps {
		cm := &ctx.Snapshot.ConfigMaps[i]
		if cm.Namespace != ns || cm.Name != fl.configMap {
			continue
		}
		var conf struct {
			Backend *struct{ Type string }
		}
		if err := json.Unmarshal([]byte(cm.Data["net-conf.json"]), &conf); err != nil {
			ctx.Incomplete(ruleVXLANOffload, "ConfigMap %s/%s holds no readable net-conf.json", ns, fl.configMap)
			return "", "", false
		}
		backend = "udp" // flannel's default when net-conf.json names no backend
		if conf.Backend != nil && conf.Backend.Type != "" {
			backend = strings.ToLower(conf.Backend.Type)
		}
		return backend, fmt.Sprintf("ConfigMap %s/%s net-conf.json: Backend Type %s", ns, fl.configMap, backend), true
	}
	switch {
	case !slices.Contains(snapshot.NamedConfigMaps, ns+"/"+fl.configMap):
		ctx.Incomplete(ruleVXLANOffload, "DaemonSet %s/%s reads its backend from ConfigMap %s/%s, which kubegap does not read",
			ns, fl.ds.Name, ns, fl.configMap)
	case ctx.CompleteIn(snapshot.ConfigMaps, ns):
		ctx.Incomplete(ruleVXLANOffload, "ConfigMap %s/%s, which DaemonSet %s/%s mounts, does not exist",
			ns, fl.configMap, ns, fl.ds.Name)
	default:
		ctx.Incomplete(ruleVXLANOffload, "ConfigMap %s/%s, flannel's backend, is not in the input", ns, fl.configMap)
	}
	return "", "", false
}

// proxyVersions gives, per node name, the kube-proxy version that node
// runs: the tag of the kube-proxy DaemonSet image that targets it.
func proxyVersions(s *snapshot.Snapshot, kps []kubeProxyDS) map[string]check.KubeVersion {
	out := map[string]check.KubeVersion{}
	for _, kp := range kps {
		_, tag, _ := check.ImageParts(kp.image)
		v, ok := check.ParseKubeVersion(tag)
		if !ok {
			continue
		}
		for _, n := range nodesOf(s, kp) {
			out[n.Name] = v
		}
	}
	return out
}

func vxlanFindings(ctx *check.Context, facts *dataplaneFacts, kps []kubeProxyDS, fls []flannelDS) []finding.Finding {
	var out []finding.Finding
	var proxies map[string]check.KubeVersion
	for _, fl := range fls {
		backend, from, ok := flannelBackend(ctx, fl)
		if !ok || backend != "vxlan" {
			continue
		}
		if proxies == nil {
			proxies = proxyVersions(ctx.Snapshot, kps)
		}
		for i := range facts.VXLANOffload {
			o := overlay{ds: fl.ds, image: fl.image, agent: "Flannel", from: from}
			if f, ok := vxlanFinding(ctx.Snapshot, o, &facts.VXLANOffload[i], proxies); ok {
				out = append(out, f)
			}
		}
	}
	for i := range facts.VXLANOffload {
		r := &facts.VXLANOffload[i]
		for _, o := range calicoOverlays(ctx, r) {
			if proxies == nil {
				proxies = proxyVersions(ctx.Snapshot, kps)
			}
			if f, ok := vxlanFinding(ctx.Snapshot, o, r, proxies); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// overlay is a CNI DaemonSet that runs a VXLAN overlay; from says how
// kubegap knows the mode.
type overlay struct {
	ds                 *appsv1.DaemonSet
	image, agent, from string
}

// calicoOverlays are the calico-node DaemonSets from releases that do not
// turn VXLAN checksum offload off themselves, when an IPPool uses VXLAN.
func calicoOverlays(ctx *check.Context, r *vxlanOffloadRow) []overlay {
	var out []overlay
	var from string
	var pools, poolsRead bool
	for i := range ctx.Snapshot.DaemonSets {
		d := &ctx.Snapshot.DaemonSets[i]
		image, v, ok := calicoNode(ctx, d, r)
		if !ok || carriesFix(v, r.calicoFixed) {
			continue
		}
		if !poolsRead {
			from, pools = vxlanPool(ctx)
			poolsRead = true
		}
		if pools {
			out = append(out, overlay{ds: d, image: image, agent: "Calico " + v.String(), from: from})
		}
	}
	return out
}

// calicoNode finds a calico-node container in a DaemonSet and its release;
// a version kubegap cannot read leaves a note.
func calicoNode(ctx *check.Context, d *appsv1.DaemonSet, r *vxlanOffloadRow) (string, check.KubeVersion, bool) {
	for _, c := range d.Spec.Template.Spec.Containers {
		repo, tag, _ := check.ImageParts(c.Image)
		if !r.calicoRE.MatchString(repo) {
			continue
		}
		v, ok := check.ParseKubeVersion(tag)
		if !ok {
			ctx.Incomplete(ruleVXLANOffload, "DaemonSet %s/%s image %s carries no version tag kubegap can read",
				d.Namespace, d.Name, c.Image)
		}
		return c.Image, v, ok
	}
	return "", check.KubeVersion{}, false
}

// vxlanPool reports whether an enabled Calico IPPool uses VXLAN (Always or
// CrossSubnet); IPPools not in the input leave a note.
func vxlanPool(ctx *check.Context) (from string, ok bool) {
	for _, p := range ctx.Snapshot.CustomObjects(snapshot.CalicoIPPools) {
		mode, _, _ := unstructured.NestedString(p.Object, "spec", "vxlanMode")
		disabled, _, _ := unstructured.NestedBool(p.Object, "spec", "disabled")
		if !disabled && (mode == "Always" || mode == "CrossSubnet") {
			return fmt.Sprintf("IPPool %s: vxlanMode %s", p.GetName(), mode), true
		}
	}
	if !ctx.Complete(snapshot.CalicoIPPools) {
		ctx.Incomplete(ruleVXLANOffload, "Calico IPPools (crd.projectcalico.org) are not in the input, so whether Calico runs VXLAN is unknown")
	}
	return "", false
}

// exposedNode: a node's kernel is before the fix and its kube-proxy (else
// kubelet) version lacks the unmark change; ev says why.
func exposedNode(n *corev1.Node, r *vxlanOffloadRow, proxies map[string]check.KubeVersion) (ev string, ok bool) {
	k, ok := linuxKernel(n)
	if !ok || !k.Less(r.fixed) {
		return "", false
	}
	v, known := proxies[n.Name]
	what := "kube-proxy"
	if !known {
		if v, known = check.ParseKubeVersion(n.Status.NodeInfo.KubeletVersion); !known {
			return "", false
		}
		what = "kubelet (no kube-proxy image version for this node)"
	}
	if !r.kubeProxyAffected(v) {
		return "", false
	}
	return fmt.Sprintf("Node %s: kernelVersion %s, %s %s", n.Name, n.Status.NodeInfo.KernelVersion, what, v.String()), true
}

func vxlanFinding(s *snapshot.Snapshot, o overlay, r *vxlanOffloadRow, proxies map[string]check.KubeVersion) (finding.Finding, bool) {
	var hit []*corev1.Node
	var ev []string
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if !targets(&o.ds.Spec.Template.Spec, n) {
			continue
		}
		e, ok := exposedNode(n, r, proxies)
		if !ok {
			continue
		}
		hit = append(hit, n)
		if len(ev) < check.MaxEvidence {
			ev = append(ev, e)
		}
	}
	if len(hit) == 0 {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(hit)
	objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", o.ds)}, refs...)
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("%s VXLAN overlay on %s with kernels older than %s and a kube-proxy that re-masquerades tunnel packets",
			o.agent, check.Plural(len(hit), "node", "nodes"), r.fixed.MinorString()),
		Message: strings.TrimSpace(r.Note) + " A stable or distribution kernel may carry the checksum fix, and offload " +
			"turned off with ethtool on the VXLAN interface is not visible through the API." + check.MoreText(more),
		Evidence: append(append([]string{o.from}, ev...), fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))),
		Remediation: "Upgrade kube-proxy and the kubelet to 1.16.13, 1.17.9, 1.18.6, 1.19.0 or later (with Calico, or Calico to " +
			"3.19.2 or 3.20.0 and later), or move these nodes to a 5.7 or later kernel; until then turn off TX checksum " +
			"offload on the VXLAN interface (ethtool -K flannel.1 or vxlan.calico tx-checksum-ip-generic off) " +
			"persistently on every node, and test cross-node ClusterIP and NodePort latency.",
	}
	withImage(&f, o.ds, o.image)
	f.AddEvidence(check.NodeValues(hit, nodeField("status.nodeInfo.kernelVersion", func(n *corev1.Node) string { return n.Status.NodeInfo.KernelVersion }))...)
	return f, true
}
