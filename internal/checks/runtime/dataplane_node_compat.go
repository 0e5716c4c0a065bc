package runtime

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

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
	// CalicoIPTablesAuto: see dataplane_node_compat_calico_backend.go.
	CalicoIPTablesAuto []calicoAutoRow `json:"calicoIPTablesAuto"`
	NFTDefault         []struct {
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
	for i := range f.CalicoIPTablesAuto {
		if err := f.CalicoIPTablesAuto[i].parse(); err != nil {
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
		for _, r := range f.CalicoIPTablesAuto {
			cases = append(cases, r.Case)
		}
	}
	return check.Check{
		ID:       dataplaneID,
		Title:    "kube-proxy data-path mode against the nodes' kernel and OS",
		Severity: finding.High,
		Description: "Reads kube-proxy's mode from the ConfigMap its --config file is mounted from (kubeadm's " +
			"kube-system/kube-proxy, EKS's kube-system/kube-proxy-config; another name leaves the rule partial), else from " +
			"the --proxy-mode flag of the kube-proxy DaemonSet, and its version from the DaemonSet's image. IPVS mode on nodes " +
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
			"destination collide in SNAT and lose their first packet. Calico IPPools are read from crd.projectcalico.org. " +
			"calico-node before 3.25.2 that detects the iptables backend itself (FELIX_IPTABLESBACKEND Auto, or unset from 3.17, " +
			"when Felix's default became Auto; the variable's value is kept only when it is Auto, Legacy or NFT) on RHEL, CentOS, " +
			"Oracle, Rocky or Alma 8 nodes is medium: that detection chose legacy tables on those nf_tables hosts. A " +
			"FelixConfiguration's iptablesBackend, which kubegap does not read, applies only where the variable is unset, and the " +
			"finding says so.",
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
			{ID: ruleCalicoAuto, Summary: "no calico-node with the old automatic iptables backend detection runs on RHEL 8 family nodes",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.DaemonSets}},
		},
		Cases: check.Graded(cases, check.Prevents("kube-proxy-ipvs-conntrack-reuse-2019", "xing-conntrack-snat-race-connection-timeouts-2018", "vxlan-checksum-offload-63s-service-delay-2020"), check.Detects("kube-proxy-iptables-legacy-vs-nft-mismatch-2018", "el8-el9-iptables-backend-mismatch-calico-kube-proxy-2023-2025")),
		Run:   runDataplaneNodeCompat,
	}
}

// kubeProxyDS is a kube-proxy DaemonSet and what its template says.
type kubeProxyDS struct {
	ds         *appsv1.DaemonSet
	container  *corev1.Container
	image      string
	modeFlag   string // --proxy-mode, "" when not set
	hasConfig  bool   // --config: the mode is in a file, usually from a ConfigMap
	configPath string // the --config file
}

func kubeProxyDaemonSets(s *snapshot.Snapshot) []kubeProxyDS {
	var out []kubeProxyDS
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		for ci := range d.Spec.Template.Spec.Containers {
			c := &d.Spec.Template.Spec.Containers[ci]
			if !strings.HasPrefix(check.ImageName(c.Image), "kube-proxy") {
				continue
			}
			kp := kubeProxyDS{ds: d, container: c, image: c.Image}
			args := append(append([]string{}, c.Command...), c.Args...)
			for j, a := range args {
				switch {
				case strings.HasPrefix(a, "--proxy-mode="):
					kp.modeFlag = strings.TrimPrefix(a, "--proxy-mode=")
				case a == "--proxy-mode" && j+1 < len(args):
					kp.modeFlag = args[j+1]
				case strings.HasPrefix(a, "--config="):
					kp.hasConfig, kp.configPath = true, strings.TrimPrefix(a, "--config=")
				case a == "--config":
					kp.hasConfig = true
					if j+1 < len(args) {
						kp.configPath = args[j+1]
					}
				}
			}
			out = append(out, kp)
			break
		}
	}
	return out
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
	out = append(out, calicoAutoFindings(ctx, facts)...)
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

// nodeField quotes one field of a node, for check.NodeValues.
func nodeField(path string, value func(*corev1.Node) string) func(*corev1.Node) []finding.Field {
	return func(n *corev1.Node) []finding.Field { return []finding.Field{finding.Value(path, value(n))} }
}

// imageQuote quotes the container of a DaemonSet that runs image: its
// path and the image, as the template writes them. ok is false when no
// container runs it.
func imageQuote(ds *appsv1.DaemonSet, image string) (finding.EvidenceItem, bool) {
	spec := &ds.Spec.Template.Spec
	for _, list := range []struct {
		kind string
		cs   []corev1.Container
	}{{check.Containers, spec.Containers}, {check.InitContainers, spec.InitContainers}} {
		kind := list.kind
		for _, c := range list.cs {
			if c.Image == image {
				return finding.Quote(check.Ref("apps/v1", "DaemonSet", ds),
					finding.Value(check.ContainerField("DaemonSet", kind, c.Name, "image"), image)), true
			}
		}
	}
	return finding.EvidenceItem{}, false
}

// withImage adds the DaemonSet's image to f, as an evidence item where
// a container runs it, else in words.
func withImage(f *finding.Finding, ds *appsv1.DaemonSet, image string) {
	if it, ok := imageQuote(ds, image); ok {
		f.AddEvidence(it)
		return
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("DaemonSet %s/%s image %s", ds.Namespace, ds.Name, image))
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
