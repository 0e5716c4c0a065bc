package runtime

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	dataplaneID          = "dataplane-node-compat"
	ruleIPVSKernel       = "kube-proxy-ipvs-kernel"
	ruleIPTablesBackend  = "kube-proxy-iptables-backend"
	ruleVXLANOffload     = "vxlan-checksum-offload"
	ruleMasqRandom       = "cni-masquerade-random-fully"
	kubeProxyConfigMapNS = "kube-system"
	kubeProxyConfigMap   = "kube-proxy"
)

//go:embed data/dataplane-node-compat.yaml
var dataplaneData []byte

type dataplaneRow struct {
	Case     string   `json:"case"`
	Reviewed string   `json:"reviewed"`
	Note     string   `json:"note"`
	Sources  []string `json:"sources"`
}

type dataplaneFacts struct {
	IPVS []struct {
		dataplaneRow
		FixedKernel string `json:"fixedKernel"`
		fixed       check.KubeVersion
	} `json:"ipvs"`
	KubeProxyImages []struct {
		dataplaneRow
		Repo        string `json:"repo"`
		DetectsFrom string `json:"detectsFrom"`
		repoRE      *regexp.Regexp
		detects     check.KubeVersion
	} `json:"kubeProxyImages"`
	VXLANOffload    []vxlanOffloadRow    `json:"vxlanOffload"`
	MasqRandomFully []masqRandomFullyRow `json:"masqRandomFully"`
	NFTDefault      []struct {
		Name    string   `json:"name"`
		OSImage string   `json:"osImage"`
		Sources []string `json:"sources"`
		osRE    *regexp.Regexp
	} `json:"nftDefault"`
}

var loadDataplaneFacts = check.Facts("data/dataplane-node-compat.yaml", dataplaneData, func(f *dataplaneFacts) error {
	var ok bool
	var err error
	for i := range f.IPVS {
		r := &f.IPVS[i]
		if err := rowOK(r.dataplaneRow); err != nil {
			return err
		}
		if r.fixed, ok = check.ParseKubeVersion(r.FixedKernel); !ok {
			return dataErr("ipvs.fixedKernel", r.FixedKernel)
		}
	}
	for i := range f.KubeProxyImages {
		r := &f.KubeProxyImages[i]
		if err := rowOK(r.dataplaneRow); err != nil {
			return err
		}
		if r.repoRE, err = regexp.Compile(r.Repo); err != nil {
			return dataErr("kubeProxyImages.repo", err)
		}
		if r.detects, ok = check.ParseKubeVersion(r.DetectsFrom); !ok {
			return dataErr("kubeProxyImages.detectsFrom", r.DetectsFrom)
		}
	}
	for i := range f.VXLANOffload {
		if err := f.VXLANOffload[i].parse(); err != nil {
			return err
		}
	}
	for i := range f.MasqRandomFully {
		if err := f.MasqRandomFully[i].parse(); err != nil {
			return err
		}
	}
	for i := range f.NFTDefault {
		r := &f.NFTDefault[i]
		if r.osRE, err = regexp.Compile(r.OSImage); err != nil {
			return dataErr("nftDefault.osImage", err)
		}
	}
	return nil
})

// dataplaneNodeCompatCheck judges kube-proxy's data path against the
// nodes it programs: IPVS mode on kernels without the IPVS connection-reuse
// fixes, and kube-proxy images that cannot use the host's nf_tables
// iptables backend.
func dataplaneNodeCompatCheck() check.Check {
	var cases []string
	if f, err := loadDataplaneFacts(); err == nil {
		for _, r := range f.IPVS {
			cases = append(cases, r.Case)
		}
		for _, r := range f.KubeProxyImages {
			cases = append(cases, r.Case)
		}
		for _, r := range f.VXLANOffload {
			cases = append(cases, r.Case)
		}
		for _, r := range f.MasqRandomFully {
			cases = append(cases, r.Case)
		}
	}
	return check.Check{
		ID:       dataplaneID,
		Title:    "kube-proxy data-path mode against the nodes' kernel and OS",
		Severity: finding.High,
		Description: "Reads kube-proxy's mode from the kube-system/kube-proxy ConfigMap (config.conf), else from the " +
			"--proxy-mode flag of the kube-proxy DaemonSet, and its version from the DaemonSet's image. IPVS mode on nodes " +
			"whose kernel is older than 5.9, which lacks the IPVS connection-reuse fixes, is medium: a distribution kernel " +
			"may carry the patches. An official kube-proxy image older than 1.17, which only writes legacy iptables tables, " +
			"on nodes whose OS image defaults to the nf_tables backend (Debian 10+, RHEL/CentOS 8+, Ubuntu 22.04+) is " +
			"high, unless the host was switched to iptables-legacy, which the API does not show. Facts and sources: " +
			"data/dataplane-node-compat.yaml. kube-proxy builds from distributions and cloud providers are not judged. " +
			"A Flannel or Canal VXLAN backend (net-conf.json in the ConfigMap the flannel DaemonSet mounts), or a Calico " +
			"IPPool in VXLAN mode with calico-node before 3.19.2 (3.20.0 on 3.20), on nodes with " +
			"kernels older than 5.7 and a kube-proxy (else kubelet) that does not yet unmark packets before masquerading " +
			"(1.16 to 1.17.8, 1.18.0 to 1.18.5) is medium: Service connections can stall for 1 or 63 seconds; a stable or " +
			"distribution kernel may carry the fix, and offload turned off by hand is not visible. Flannel masquerading " +
			"(--ip-masq) without fully random source ports (releases before 0.11.0, or --ip-masq-fully-random-disable), " +
			"and Calico before 3.2.4 (3.3.0 on 3.3) with a natOutgoing IPPool, are medium: concurrent connections to one " +
			"destination collide in SNAT and lose their first packet. Calico IPPools are read from crd.projectcalico.org.",
		Reads: append(check.Needs(snapshot.Nodes, snapshot.DaemonSets, snapshot.ConfigMaps), check.Optional(snapshot.CalicoIPPools)),
		Rules: []check.Rule{
			{ID: ruleIPVSKernel, Summary: "kube-proxy does not run in IPVS mode on kernels older than the IPVS fixes",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.ConfigMaps}},
			{ID: ruleIPTablesBackend, Summary: "no kube-proxy image without iptables backend detection runs on nf_tables-default nodes",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
			{ID: ruleVXLANOffload, Summary: "no VXLAN overlay crosses nodes whose kernel and kube-proxy together break its checksums",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets, snapshot.ConfigMaps}},
			{ID: ruleMasqRandom, Summary: "the CNI agent's masquerade rules choose source ports fully at random",
				Needs: []snapshot.Resource{snapshot.DaemonSets}},
		},
		Cases: cases,
		Run:   runDataplaneNodeCompat,
	}
}

// kubeProxyDS is a kube-proxy DaemonSet and what its template says.
type kubeProxyDS struct {
	ds        *appsv1.DaemonSet
	image     string
	modeFlag  string // --proxy-mode, "" when not set
	hasConfig bool   // --config: the mode is in a file, usually the ConfigMap
}

func kubeProxyDaemonSets(s *snapshot.Snapshot) []kubeProxyDS {
	var out []kubeProxyDS
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		for _, c := range d.Spec.Template.Spec.Containers {
			if !strings.HasPrefix(check.ImageName(c.Image), "kube-proxy") {
				continue
			}
			kp := kubeProxyDS{ds: d, image: c.Image}
			args := append(append([]string{}, c.Command...), c.Args...)
			for j, a := range args {
				switch {
				case strings.HasPrefix(a, "--proxy-mode="):
					kp.modeFlag = strings.TrimPrefix(a, "--proxy-mode=")
				case a == "--proxy-mode" && j+1 < len(args):
					kp.modeFlag = args[j+1]
				case a == "--config" || strings.HasPrefix(a, "--config="):
					kp.hasConfig = true
				}
			}
			out = append(out, kp)
			break
		}
	}
	return out
}

// configMapMode reads the mode from kube-system/kube-proxy's
// KubeProxyConfiguration; found is false when the ConfigMap is not in the
// input or holds no configuration.
func configMapMode(s *snapshot.Snapshot) (mode string, found bool) {
	for i := range s.ConfigMaps {
		cm := &s.ConfigMaps[i]
		if cm.Namespace != kubeProxyConfigMapNS || cm.Name != kubeProxyConfigMap {
			continue
		}
		conf, ok := cm.Data["config.conf"]
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

func runDataplaneNodeCompat(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	facts, err := loadDataplaneFacts()
	if err != nil {
		return nil, err
	}
	if len(s.Nodes) == 0 {
		return nil, check.NotEvaluated("the input holds no nodes")
	}
	kps := kubeProxyDaemonSets(s)
	var out []finding.Finding
	out = append(out, ipvsFindings(ctx, facts, kps)...)
	out = append(out, backendFindings(ctx, facts, kps)...)
	fls := flannelDaemonSets(s, facts)
	out = append(out, vxlanFindings(ctx, facts, kps, fls)...)
	out = append(out, masqFindings(ctx, facts, fls)...)
	return out, nil
}

// linuxKernel parses a Linux node's kernelVersion ("5.4.0-182-generic",
// "3.10.0-1160.el7.x86_64"); Windows nodes and unreadable versions give ok
// false.
func linuxKernel(n *corev1.Node) (check.KubeVersion, bool) {
	if os := n.Status.NodeInfo.OperatingSystem; os != "" && os != "linux" {
		return check.KubeVersion{}, false
	}
	k := n.Status.NodeInfo.KernelVersion
	if i := strings.IndexAny(k, "-+_ "); i >= 0 {
		k = k[:i]
	}
	return check.ParseKubeVersion(k)
}

// nodesOf are the nodes a kube-proxy DaemonSet runs on.
func nodesOf(s *snapshot.Snapshot, kp kubeProxyDS) []*corev1.Node {
	var out []*corev1.Node
	for i := range s.Nodes {
		if targets(&kp.ds.Spec.Template.Spec, &s.Nodes[i]) {
			out = append(out, &s.Nodes[i])
		}
	}
	return out
}

func ipvsFindings(ctx *check.Context, facts *dataplaneFacts, kps []kubeProxyDS) []finding.Finding {
	s := ctx.Snapshot
	cmMode, cmFound := configMapMode(s)
	if len(kps) == 0 && cmFound && cmMode == "ipvs" {
		ctx.Incomplete(ruleIPVSKernel, "the %s/%s ConfigMap sets mode ipvs, but no kube-proxy DaemonSet in the input shows "+
			"which nodes run it", kubeProxyConfigMapNS, kubeProxyConfigMap)
	}
	var out []finding.Finding
	for _, kp := range kps {
		mode, from := kp.modeFlag, fmt.Sprintf("DaemonSet %s/%s flag --proxy-mode=%s", kp.ds.Namespace, kp.ds.Name, kp.modeFlag)
		if kp.hasConfig || mode == "" {
			switch {
			case cmFound:
				mode, from = cmMode, fmt.Sprintf("ConfigMap %s/%s config.conf mode: %q", kubeProxyConfigMapNS, kubeProxyConfigMap, cmMode)
			case kp.hasConfig:
				if ctx.Complete(snapshot.ConfigMaps) {
					ctx.Incomplete(ruleIPVSKernel, "DaemonSet %s/%s reads its mode from a file that is not the %s/%s ConfigMap",
						kp.ds.Namespace, kp.ds.Name, kubeProxyConfigMapNS, kubeProxyConfigMap)
				} else {
					ctx.Incomplete(ruleIPVSKernel, "kube-proxy's mode is in the %s/%s ConfigMap, which is not in the input",
						kubeProxyConfigMapNS, kubeProxyConfigMap)
				}
				continue
			}
		}
		if mode != "ipvs" {
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

func ipvsFinding(s *snapshot.Snapshot, kp kubeProxyDS, from string, r dataplaneRow, fixed check.KubeVersion) (finding.Finding, bool) {
	var old []*corev1.Node
	var ev []string
	for _, n := range nodesOf(s, kp) {
		k, ok := linuxKernel(n)
		if !ok || !k.Less(fixed) {
			continue
		}
		old = append(old, n)
		if len(ev) < check.MaxEvidence {
			ev = append(ev, fmt.Sprintf("Node %s: kernelVersion %s", n.Name, n.Status.NodeInfo.KernelVersion))
		}
	}
	if len(old) == 0 {
		return finding.Finding{}, false
	}
	refs, more := check.NodeRefs(old)
	objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", kp.ds)}, refs...)
	return finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("kube-proxy runs in IPVS mode on %s with kernels older than %s",
			check.Plural(len(old), "node", "nodes"), fixed.MinorString()),
		Message:  strings.TrimSpace(r.Note) + " A distribution kernel may carry the patches; its changelog says." + check.MoreText(more),
		Evidence: append(append([]string{from}, ev...), fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))),
		Remediation: "Move these nodes to a 5.9 or later kernel (or one whose vendor backported the IPVS connection-reuse " +
			"fixes), or run kube-proxy in iptables or nftables mode there; test graceful termination under the real " +
			"proxy mode with a client that reuses source ports.",
	}, true
}

func backendFindings(ctx *check.Context, facts *dataplaneFacts, kps []kubeProxyDS) []finding.Finding {
	s := ctx.Snapshot
	var out []finding.Finding
	for _, kp := range kps {
		repo, tag, _ := check.ImageParts(kp.image)
		for _, r := range facts.KubeProxyImages {
			if !r.repoRE.MatchString(repo) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				ctx.Incomplete(ruleIPTablesBackend, "DaemonSet %s/%s image %s carries no version tag kubegap can read",
					kp.ds.Namespace, kp.ds.Name, kp.image)
				continue
			}
			if !v.Less(r.detects) {
				continue
			}
			if f, ok := backendFinding(s, facts, kp, v, r.dataplaneRow, r.detects); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func backendFinding(s *snapshot.Snapshot, facts *dataplaneFacts, kp kubeProxyDS, v check.KubeVersion,
	r dataplaneRow, detects check.KubeVersion) (finding.Finding, bool) {
	var hit []*corev1.Node
	var ev []string
	families := map[string]bool{}
	sources := append([]string{}, r.Sources...)
	for _, n := range nodesOf(s, kp) {
		for _, os := range facts.NFTDefault {
			if !os.osRE.MatchString(n.Status.NodeInfo.OSImage) {
				continue
			}
			hit = append(hit, n)
			if len(ev) < check.MaxEvidence {
				ev = append(ev, fmt.Sprintf("Node %s: osImage %q (%s: nf_tables by default)", n.Name, n.Status.NodeInfo.OSImage, os.Name))
			}
			if !families[os.Name] {
				families[os.Name] = true
				sources = append(sources, os.Sources...)
			}
			break
		}
	}
	if len(hit) == 0 {
		return finding.Finding{}, false
	}
	names := make([]string, 0, len(families))
	for n := range families {
		names = append(names, n)
	}
	sort.Strings(names)
	refs, more := check.NodeRefs(hit)
	objs := append([]finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", kp.ds)}, refs...)
	return finding.Finding{
		Check: dataplaneID, Severity: finding.High, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("kube-proxy %s, older than %s, programs %s whose iptables defaults to nf_tables",
			v.String(), detects.MinorString(), check.Plural(len(hit), "node", "nodes")),
		Message: strings.TrimSpace(r.Note) + fmt.Sprintf(" These nodes run %s. A host switched to iptables-legacy "+
			"(update-alternatives) is not affected, and the API does not show that.", strings.Join(names, ", ")) + check.MoreText(more),
		Evidence: append(append([]string{fmt.Sprintf("DaemonSet %s/%s image %s", kp.ds.Namespace, kp.ds.Name, kp.image)}, ev...),
			fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(sources, ", "))),
		Remediation: "Upgrade kube-proxy to 1.17 or later, whose image detects the host's iptables mode, or switch these " +
			"hosts to iptables-legacy (iptables, ip6tables, arptables, ebtables) before kube-proxy starts; introduce a new " +
			"node OS in a canary pool first.",
	}, true
}

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

func dataErr(what string, v any) error {
	return fmt.Errorf("data/dataplane-node-compat.yaml: %s: %v", what, v)
}

func rowOK(r dataplaneRow) error {
	if _, err := time.Parse(time.DateOnly, r.Reviewed); err != nil || r.Case == "" || len(r.Sources) == 0 {
		return dataErr("row without case, reviewed day or sources", r.Case)
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
	return finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case}, Objects: objs,
		Title: fmt.Sprintf("%s VXLAN overlay on %s with kernels older than %s and a kube-proxy that re-masquerades tunnel packets",
			o.agent, check.Plural(len(hit), "node", "nodes"), r.fixed.MinorString()),
		Message: strings.TrimSpace(r.Note) + " A stable or distribution kernel may carry the checksum fix, and offload " +
			"turned off with ethtool on the VXLAN interface is not visible through the API." + check.MoreText(more),
		Evidence: append(append([]string{fmt.Sprintf("DaemonSet %s/%s image %s", o.ds.Namespace, o.ds.Name, o.image), o.from}, ev...),
			fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))),
		Remediation: "Upgrade kube-proxy and the kubelet to 1.17.9, 1.18.6, 1.19.0 or later (with Calico, or Calico to " +
			"3.19.2 or 3.20.0 and later), or move these nodes to a 5.7 or later kernel; until then turn off TX checksum " +
			"offload on the VXLAN interface (ethtool -K flannel.1 or vxlan.calico tx-checksum-ip-generic off) " +
			"persistently on every node, and test cross-node ClusterIP and NodePort latency.",
	}, true
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
	return finding.Finding{
		Check: dataplaneID, Severity: finding.Medium, Cases: []string{r.Case},
		Objects: []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", d)},
		Title:   fmt.Sprintf("%s masquerades pod traffic without fully random source ports", agentNames[r.Agent]),
		Message: strings.TrimSpace(r.Note),
		Evidence: []string{why, fmt.Sprintf("DaemonSet %s/%s image %s", d.Namespace, d.Name, image),
			fmt.Sprintf("reviewed %s; sources: %s", r.Reviewed, strings.Join(r.Sources, ", "))},
		Remediation: fix + ", so its MASQUERADE rules use --random-fully (the iptables in the image must support it); " +
			"watch the conntrack insert_failed counter on busy nodes.",
	}
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
