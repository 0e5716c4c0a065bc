package runtime

// The kube-proxy-ipvs-kernel rule of dataplane-node-compat: kube-proxy's mode,
// read from its flag or the ConfigMap its --config file is mounted from, and
// IPVS mode on kernels without the IPVS connection-reuse fixes.

import (
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// configMapMode reads the mode from the KubeProxyConfiguration under key
// of ConfigMap ns/name; found is false when the ConfigMap is not in the
// input or holds no configuration there.
func configMapMode(s *snapshot.Snapshot, ns, name, key string) (mode string, found bool) {
	for i := range s.ConfigMaps {
		cm := &s.ConfigMaps[i]
		if cm.Namespace != ns || cm.Name != name {
			continue
		}
		conf, ok := cm.Data[key]
		if !ok {
			return "", false
		}
		var kc struct {
			Mode string `json:"mode"`
		}
		if err := yaml.Unmarshal([]byte(conf), &kc); err != nil {
			return "", false
		}
		return kc.Mode, true
	}
	return "", false
}

// configSource names the ConfigMap and key behind kube-proxy's --config
// file: the configMap volume mounted at the file's directory (kubeadm
// mounts kube-system/kube-proxy at /var/lib/kube-proxy, EKS
// kube-system/kube-proxy-config at /var/lib/kube-proxy-config). ok is
// false when no ConfigMap volume holds the file.
func configSource(kp kubeProxyDS) (name, key string, ok bool) {
	if kp.configPath == "" {
		return "", "", false
	}
	dir, file := path.Split(path.Clean(kp.configPath))
	for _, m := range kp.container.VolumeMounts {
		if path.Clean(m.MountPath) != path.Clean(dir) || m.SubPath != "" {
			continue
		}
		for _, v := range kp.ds.Spec.Template.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			key = file
			for _, it := range v.ConfigMap.Items {
				if it.Path == file {
					key = it.Key
				}
			}
			return v.ConfigMap.Name, key, true
		}
	}
	return "", "", false
}

func ipvsFindings(ctx *check.Context, facts *dataplaneFacts, kps []kubeProxyDS) []finding.Finding {
	s := ctx.Snapshot
	cmMode, cmFound := configMapMode(s, kubeProxyConfigMapNS, kubeProxyConfigMap, "config.conf")
	if len(kps) == 0 && cmFound && cmMode == "ipvs" {
		ctx.Incomplete(ruleIPVSKernel, "the %s/%s ConfigMap sets mode ipvs, but no kube-proxy DaemonSet in the input shows "+
			"which nodes run it", kubeProxyConfigMapNS, kubeProxyConfigMap)
	}
	var out []finding.Finding
	for _, kp := range kps {
		mode, from, known := kubeProxyMode(ctx, kp, cmMode, cmFound)
		if !known || mode != "ipvs" {
			continue
		}
		for _, r := range facts.IPVS {
			if f, ok := ipvsFinding(s, kp, from, r.dataplaneRow, r.fixed); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

// kubeProxyMode is the proxy mode kp runs and where that was read: the
// --proxy-mode flag, else the KubeProxyConfiguration in the ConfigMap its
// --config file is mounted from, else (no --config) kubeadm's
// kube-system/kube-proxy. known is false, with the rule marked partial,
// when the file's ConfigMap is not in the input or not one kubegap reads.
func kubeProxyMode(ctx *check.Context, kp kubeProxyDS, cmMode string, cmFound bool) (mode, from string, known bool) {
	ds := kp.ds.Namespace + "/" + kp.ds.Name
	if kp.modeFlag != "" && !kp.hasConfig {
		return kp.modeFlag, fmt.Sprintf("DaemonSet %s flag --proxy-mode=%s", ds, kp.modeFlag), true
	}
	if !kp.hasConfig {
		if cmFound {
			return cmMode, fmt.Sprintf("ConfigMap %s/%s config.conf mode: %q", kubeProxyConfigMapNS, kubeProxyConfigMap, cmMode), true
		}
		return "", "", true // no flag, no file: the default mode, not IPVS
	}
	name, key, ok := configSource(kp)
	if !ok {
		ctx.Incomplete(ruleIPVSKernel, "DaemonSet %s reads its mode from %s, which no ConfigMap volume in its template holds",
			ds, kp.configPath)
		return "", "", false
	}
	ns := kp.ds.Namespace
	if mode, found := configMapMode(ctx.Snapshot, ns, name, key); found {
		return mode, fmt.Sprintf("ConfigMap %s/%s %s mode: %q (DaemonSet %s --config=%s)", ns, name, key, mode, ds, kp.configPath), true
	}
	switch {
	case !slices.Contains(snapshot.NamedConfigMaps, ns+"/"+name):
		ctx.Incomplete(ruleIPVSKernel, "DaemonSet %s reads its mode from ConfigMap %s/%s, which kubegap does not read", ds, ns, name)
	case ctx.Complete(snapshot.ConfigMaps):
		ctx.Incomplete(ruleIPVSKernel, "DaemonSet %s reads its mode from ConfigMap %s/%s key %s, which the cluster does not hold",
			ds, ns, name, key)
	default:
		ctx.Incomplete(ruleIPVSKernel, "kube-proxy's mode is in the %s/%s ConfigMap, which is not in the input", ns, name)
	}
	return "", "", false
}

func ipvsFinding(s *snapshot.Snapshot, kp kubeProxyDS, from string, r dataplaneRow, fixed check.KubeVersion) (finding.Finding, bool) {
	var old []*corev1.Node
	for _, n := range nodesOf(s, kp) {
		k, ok := linuxKernel(n)
		if !ok || !k.Less(fixed) {
			continue
		}
		old = append(old, n)
	}
	if len(old) == 0 {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(old)
	objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", kp.ds)}, refs...)
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("kube-proxy runs in IPVS mode on %s with kernels older than %s",
			check.Plural(len(old), "node", "nodes"), fixed.MinorString()),
		Message:  strings.TrimSpace(r.Note) + " A distribution kernel may carry the patches; its changelog says." + check.MoreText(more),
		Evidence: []string{from, fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))},
		Remediation: "Move these nodes to a 5.9 or later kernel (or one whose vendor backported the IPVS connection-reuse " +
			"fixes), or run kube-proxy in iptables or nftables mode there; test graceful termination under the real " +
			"proxy mode with a client that reuses source ports.",
	}
	f.AddEvidence(check.NodeValues(old, nodeField("status.nodeInfo.kernelVersion", func(n *corev1.Node) string { return n.Status.NodeInfo.KernelVersion }))...)
	return f, true
}
