package runtime

// The overlay rules of dataplane-node-compat: VXLAN checksum offload and
// masquerading without --random-fully, with the Flannel, Canal and Calico
// configuration they read. The check itself is in dataplane_node_compat.go.

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
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

// ascending parses a non-empty list of versions in ascending order.
func ascending(list []string) ([]check.KubeVersion, bool) {
	var out []check.KubeVersion
	for _, s := range list {
		v, ok := check.ParseKubeVersion(s)
		if !ok || len(out) > 0 && !out[len(out)-1].Less(v) {
			return nil, false
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// carriesFix reports whether v carries a fix whose first release in each
// minor is listed: a minor newer than the last listed carries it, an
// older minor that is not listed does not.
func carriesFix(v check.KubeVersion, firsts []check.KubeVersion) bool {
	for _, f := range firsts {
		if v.Major == f.Major && v.Minor == f.Minor {
			return !v.Less(f)
		}
	}
	return !v.Less(firsts[len(firsts)-1])
}

// kubeProxyAffected: from r.from on, and before the fix of v's minor; a
// minor newer than the last listed carries the fix, an older one none.
func (r *vxlanOffloadRow) kubeProxyAffected(v check.KubeVersion) bool {
	return !v.Less(r.from) && !carriesFix(v, r.kpFixed)
}

// masqRandomFullyRow: a CNI agent whose masquerade rules use
// --random-fully from the releases in FixedIn on (first per minor), unless
// DisableFlag is set. Flannel masquerades with MasqFlag, Calico for IPPools
// with natOutgoing.
type masqRandomFullyRow struct {
	dataplaneRow
	Agent       string   `json:"agent"`
	Image       string   `json:"image"`
	MasqFlag    string   `json:"masqFlag"`
	FixedIn     []string `json:"fixedIn"`
	DisableFlag string   `json:"disableFlag"`
	imageRE     *regexp.Regexp
	fixedIn     []check.KubeVersion
}

func (r *masqRandomFullyRow) parse() error {
	if err := rowOK(r.dataplaneRow); err != nil {
		return err
	}
	var err error
	if r.imageRE, err = regexp.Compile(r.Image); err != nil || r.Image == "" ||
		!(r.Agent == "flannel" && r.MasqFlag != "" || r.Agent == "calico") {
		return dataErr("masqRandomFully.image, agent (flannel with masqFlag, or calico)", r.Agent)
	}
	var ok bool
	if r.fixedIn, ok = ascending(r.FixedIn); !ok {
		return dataErr("masqRandomFully.fixedIn (ascending versions)", r.FixedIn)
	}
	return nil
}

// flannelDS is a DaemonSet running flanneld, as its template shows it.
type flannelDS struct {
	ds        *appsv1.DaemonSet
	image     string
	args      []string
	env       []corev1.EnvVar
	configMap string // the ConfigMap mounted at flanneld's config directory, "" if none
}

// flannelConfigDir is where flanneld with --kube-subnet-mgr reads
// net-conf.json, as the Flannel and Canal manifests mount it.
const flannelConfigDir = "/etc/kube-flannel"

// flannelDaemonSets finds containers that run flanneld, by command or,
// when the image's own entrypoint starts it, by a flannel image name.
func flannelDaemonSets(s *snapshot.Snapshot, facts *dataplaneFacts) []flannelDS {
	isFlannel := func(c *corev1.Container, args []string) bool {
		if slices.ContainsFunc(args, func(a string) bool { return path.Base(a) == "flanneld" }) {
			return true
		}
		for _, r := range facts.MasqRandomFully {
			if r.Agent == "flannel" && len(c.Command) == 0 && r.imageRE.MatchString(imageRepo(c.Image)) {
				return true
			}
		}
		return false
	}
	var out []flannelDS
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		spec := &d.Spec.Template.Spec
		for _, c := range spec.Containers {
			args := append(append([]string{}, c.Command...), c.Args...)
			if !isFlannel(&c, args) {
				continue
			}
			out = append(out, flannelDS{ds: d, image: c.Image, args: args, env: c.Env, configMap: mountedConfigMap(spec, &c)})
			break
		}
	}
	return out
}

func mountedConfigMap(spec *corev1.PodSpec, c *corev1.Container) string {
	for _, m := range c.VolumeMounts {
		if strings.TrimSuffix(m.MountPath, "/") != flannelConfigDir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil {
				return v.ConfigMap.Name
			}
		}
	}
	return ""
}

// flagOn reports whether a boolean flanneld flag is set, as "--f" or
// "--f=true" in the arguments or, as Canal sets it, in the FLANNELD_F
// environment variable, literal or from a ConfigMap key. known is false
// when the variable's value is not in the input. Values are compared,
// never printed.
func flagOn(ctx *check.Context, fl flannelDS, flag string) (on, known bool) {
	for _, a := range fl.args {
		if a == flag {
			return true, true
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return truthy(v), true
		}
	}
	name := "FLANNELD_" + strings.ToUpper(strings.ReplaceAll(strings.TrimLeft(flag, "-"), "-", "_"))
	for _, e := range fl.env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom == nil {
			return truthy(e.Value), true
		}
		if ref := e.ValueFrom.ConfigMapKeyRef; ref != nil {
			return configMapKey(ctx.Snapshot, fl.ds.Namespace, ref.Name, ref.Key)
		}
		return false, false
	}
	return false, true
}

func truthy(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

func configMapKey(s *snapshot.Snapshot, ns, name, key string) (on, known bool) {
	for i := range s.ConfigMaps {
		if cm := &s.ConfigMaps[i]; cm.Namespace == ns && cm.Name == name {
			v, ok := cm.Data[key]
			return ok && truthy(v), true
		}
	}
	return false, false
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

func masqFindings(ctx *check.Context, facts *dataplaneFacts, fls []flannelDS) []finding.Finding {
	var out []finding.Finding
	for i := range facts.MasqRandomFully {
		r := &facts.MasqRandomFully[i]
		switch r.Agent {
		case "flannel":
			for _, fl := range fls {
				if f, ok := flannelMasq(ctx, fl, r); ok {
					out = append(out, f)
				}
			}
		case "calico":
			out = append(out, calicoMasq(ctx, r)...)
		}
	}
	return out
}

func imageRepo(image string) string {
	repo, _, _ := check.ImageParts(image)
	return repo
}

// masqAgentVersion reads the release of an agent image the row knows; ok is
// false, with a note, for other builds and unreadable tags.
func masqAgentVersion(ctx *check.Context, d *appsv1.DaemonSet, image string, r *masqRandomFullyRow) (check.KubeVersion, bool) {
	repo, tag, _ := check.ImageParts(image)
	if !r.imageRE.MatchString(repo) {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s runs %s from image %s, whose release kubegap cannot tell",
			d.Namespace, d.Name, r.Agent, image)
		return check.KubeVersion{}, false
	}
	v, ok := check.ParseKubeVersion(tag)
	if !ok {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s image %s carries no version tag kubegap can read",
			d.Namespace, d.Name, image)
	}
	return v, ok
}

func flannelMasq(ctx *check.Context, fl flannelDS, r *masqRandomFullyRow) (finding.Finding, bool) {
	d := fl.ds
	on, known := flagOn(ctx, fl, r.MasqFlag)
	if !known {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s takes %s from a value that is not in the input",
			d.Namespace, d.Name, r.MasqFlag)
	}
	if !on {
		return finding.Finding{}, false
	}
	if r.DisableFlag != "" && disabled(ctx, fl, r.DisableFlag) {
		return masqFinding(d, fl.image, r, fmt.Sprintf("DaemonSet %s/%s sets %s and %s", d.Namespace, d.Name,
			r.MasqFlag, r.DisableFlag)), true
	}
	v, ok := masqAgentVersion(ctx, d, fl.image, r)
	if !ok || carriesFix(v, r.fixedIn) {
		return finding.Finding{}, false
	}
	return masqFinding(d, fl.image, r, fmt.Sprintf("DaemonSet %s/%s sets %s and runs flannel %s, before %s",
		d.Namespace, d.Name, r.MasqFlag, v.String(), versionsText(r.fixedIn))), true
}

// calicoMasq: calico-node releases before the fix, when an enabled IPPool
// has natOutgoing.
func calicoMasq(ctx *check.Context, r *masqRandomFullyRow) []finding.Finding {
	var out []finding.Finding
	var pool string
	var poolsRead bool
	for i := range ctx.Snapshot.DaemonSets {
		d := &ctx.Snapshot.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if !r.imageRE.MatchString(imageRepo(c.Image)) {
				continue
			}
			v, ok := masqAgentVersion(ctx, d, c.Image, r)
			if !ok || carriesFix(v, r.fixedIn) {
				break
			}
			if !poolsRead {
				pool, poolsRead = natOutgoingPool(ctx), true
			}
			if pool != "" {
				out = append(out, masqFinding(d, c.Image, r, fmt.Sprintf("DaemonSet %s/%s runs calico-node %s, before %s; %s",
					d.Namespace, d.Name, v.String(), versionsText(r.fixedIn), pool)))
			}
			break
		}
	}
	return out
}

// natOutgoingPool names an enabled IPPool with natOutgoing, "" if none;
// IPPools not in the input leave a note.
func natOutgoingPool(ctx *check.Context) string {
	for _, p := range ctx.Snapshot.CustomObjects(snapshot.CalicoIPPools) {
		nat, _, _ := unstructured.NestedBool(p.Object, "spec", "natOutgoing")
		off, _, _ := unstructured.NestedBool(p.Object, "spec", "disabled")
		if nat && !off {
			return fmt.Sprintf("IPPool %s has natOutgoing", p.GetName())
		}
	}
	if !ctx.Complete(snapshot.CalicoIPPools) {
		ctx.Incomplete(ruleMasqRandom, "Calico IPPools (crd.projectcalico.org) are not in the input, so whether Calico masquerades is unknown")
	}
	return ""
}

// agentNames are the masquerading agents as titles name them.
var agentNames = map[string]string{"flannel": "Flannel", "calico": "Calico"}

func versionsText(vs []check.KubeVersion) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	return strings.Join(out, " or ")
}

func masqFinding(d *appsv1.DaemonSet, image string, r *masqRandomFullyRow, why string) finding.Finding {
	fix := fmt.Sprintf("Run %s %s or later", r.Agent, versionsText(r.fixedIn))
	if r.DisableFlag != "" {
		fix += " without " + r.DisableFlag
	}
	f := finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case},
		Objects:  []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", d)},
		Title:    fmt.Sprintf("%s masquerades pod traffic without fully random source ports", agentNames[r.Agent]),
		Message:  strings.TrimSpace(r.Note),
		Evidence: []string{why, fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))},
		Remediation: fix + ", so its MASQUERADE rules use --random-fully (the iptables in the image must support it); " +
			"watch the conntrack insert_failed counter on busy nodes.",
	}
	withImage(&f, d, image)
	return f
}

// disabled: the agent turns --random-fully off; a value kubegap cannot
// read counts as off, with a note.
func disabled(ctx *check.Context, fl flannelDS, flag string) bool {
	on, known := flagOn(ctx, fl, flag)
	if !known {
		ctx.Incomplete(ruleMasqRandom, "DaemonSet %s/%s takes %s from a value that is not in the input",
			fl.ds.Namespace, fl.ds.Name, flag)
	}
	return on
}
