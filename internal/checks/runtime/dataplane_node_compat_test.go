package runtime

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// findingNodes are the Node objects a finding names, sorted.
func findingNodes(f finding.Finding) []string {
	var out []string
	for _, o := range f.Objects {
		if o.Kind == "Node" {
			out = append(out, o.Name)
		}
	}
	slices.Sort(out)
	return out
}

func findingWith(fs []finding.Finding, case_ string) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if slices.Contains(f.Cases, case_) {
			out = append(out, f)
		}
	}
	return out
}

func TestDataplaneNodeCompatGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/gap.yaml"))
	fs, ctx, ok := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if !ok || len(fs) != 2 {
		t.Fatalf("evaluated %v, %d findings (%+v), want 2", ok, len(fs), fs)
	}
	ipvs := findingWith(fs, "kube-proxy-ipvs-conntrack-reuse-2019")
	if len(ipvs) != 1 || ipvs[0].Severity != finding.Medium ||
		!slices.Equal(findingNodes(ipvs[0]), []string{"buster-0", "ubuntu-0"}) ||
		!strings.Contains(strings.Join(ipvs[0].Evidence, "\n"), `mode: "ipvs"`) {
		t.Errorf("IPVS finding: %+v, want one medium naming buster-0 and ubuntu-0 from the ConfigMap", ipvs)
	}
	nft := findingWith(fs, "kube-proxy-iptables-legacy-vs-nft-mismatch-2018")
	if len(nft) != 1 || nft[0].Severity != finding.High ||
		!slices.Equal(findingNodes(nft[0]), []string{"bullseye-0", "buster-0"}) ||
		!strings.Contains(nft[0].Title, "1.16.15") {
		t.Errorf("backend finding: %+v, want one high naming the two Debian nodes", nft)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v on a complete input", ctx.Notes())
	}
}

func TestDataplaneNodeCompatClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/clean.yaml"))
	checktest.Quiet(t, dataplaneNodeCompatCheck(), s)
}

// The mode can come from the DaemonSet's flag when there is no --config.
func TestDataplaneNodeCompatModeFlag(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/gap.yaml"))
	s.ConfigMaps = nil
	c := &s.DaemonSets[0].Spec.Template.Spec.Containers[0]
	c.Command = []string{"kube-proxy", "--proxy-mode", "ipvs"}
	fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if got := findingWith(fs, "kube-proxy-ipvs-conntrack-reuse-2019"); len(got) != 1 {
		t.Errorf("--proxy-mode ipvs: %+v, want one IPVS finding", got)
	}
	c.Command = []string{"kube-proxy", "--proxy-mode=iptables"}
	fs, _, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if got := findingWith(fs, "kube-proxy-ipvs-conntrack-reuse-2019"); len(got) != 0 {
		t.Errorf("--proxy-mode=iptables: %+v, want no IPVS finding", got)
	}
}

// kube-proxy's --config file is followed to the ConfigMap mounted at its
// directory, as EKS mounts kube-system/kube-proxy-config at
// /var/lib/kube-proxy-config (aws/containers-roadmap#143, #142): the mode
// comes from that ConfigMap, under the file's name as key. A ConfigMap
// kubegap does not read, or a file no ConfigMap volume holds, leaves the
// rule partial.
func TestDataplaneNodeCompatFollowsConfigMount(t *testing.T) {
	eks := func(cmName string) *snapshot.Snapshot {
		s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/gap.yaml"))
		s.ConfigMaps[0].Name, s.ConfigMaps[0].Data = cmName, map[string]string{"config": s.ConfigMaps[0].Data["config.conf"]}
		spec := &s.DaemonSets[0].Spec.Template.Spec
		spec.Containers[0].Command = []string{"kube-proxy", "--v=2", "--config=/var/lib/kube-proxy-config/config"}
		spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "config", MountPath: "/var/lib/kube-proxy-config/"}}
		spec.Volumes = []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cmName}}}}}
		return s
	}
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), eks("kube-proxy-config"))
	got := findingWith(fs, "kube-proxy-ipvs-conntrack-reuse-2019")
	if len(got) != 1 || !slices.ContainsFunc(got[0].Evidence, func(e string) bool { return strings.Contains(e, "kube-proxy-config config mode") }) {
		t.Errorf("EKS layout: %+v, want one IPVS finding read from kube-system/kube-proxy-config", got)
	}
	if _, partial := ctx.Notes()[ruleIPVSKernel]; partial {
		t.Errorf("EKS layout left the IPVS rule partial: %v", ctx.Notes())
	}

	other := eks("my-proxy-settings")
	other.ConfigMaps = nil // kubegap reads ConfigMaps by name only: this one never arrives
	_, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), other)
	if n := ctx.Notes()[ruleIPVSKernel]; !strings.Contains(n.Reason, "which kubegap does not read") {
		t.Errorf("a ConfigMap kubegap does not read: note %q", n.Reason)
	}

	s := eks("kube-proxy-config")
	s.DaemonSets[0].Spec.Template.Spec.Volumes = nil
	_, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if n := ctx.Notes()[ruleIPVSKernel]; !strings.Contains(n.Reason, "no ConfigMap volume") {
		t.Errorf("a --config file from no ConfigMap: note %q", n.Reason)
	}
}

// Open world: kube-proxy reads its mode from a file, and the ConfigMap is
// not in the input. The IPVS rule is partial; the image rule still fires.
func TestDataplaneNodeCompatUnknownModeIsPartial(t *testing.T) {
	s := checktest.Load(t, "dataplane-node-compat/gap.yaml")
	s.ConfigMaps = nil
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if _, ok := ctx.Notes()[ruleIPVSKernel]; !ok {
		t.Error("kube-proxy with --config and no ConfigMap in the input must leave the IPVS rule partial")
	}
	if len(findingWith(fs, "kube-proxy-ipvs-conntrack-reuse-2019")) != 0 || len(findingWith(fs, "kube-proxy-iptables-legacy-vs-nft-mismatch-2018")) != 1 {
		t.Errorf("findings %+v, want only the backend one", fs)
	}
}

// A kube-proxy from 1.17 on, or a build kubegap does not know, is not judged
// on the backend.
func TestDataplaneNodeCompatImages(t *testing.T) {
	for image, want := range map[string]int{
		"registry.k8s.io/kube-proxy:v1.17.0":                                              0,
		"k8s.gcr.io/kube-proxy-amd64:v1.13.5":                                             1,
		"gcr.io/google_containers/kube-proxy:v1.10.0":                                     1,
		"602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.16.13-eksbuild.1": 0,
	} {
		s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/gap.yaml"))
		s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image = image
		fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
		if got := findingWith(fs, "kube-proxy-iptables-legacy-vs-nft-mismatch-2018"); len(got) != want {
			t.Errorf("%s: %d backend findings, want %d", image, len(got), want)
		}
	}
}

const (
	vxlanCase = "vxlan-checksum-offload-63s-service-delay-2020"
	snatCase  = "xing-conntrack-snat-race-connection-timeouts-2018"
)

func TestDataplaneOverlayGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/overlay-gap.yaml"))
	fs, ctx, ok := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if !ok || len(fs) != 2 {
		t.Fatalf("evaluated %v, %d findings (%+v), want 2", ok, len(fs), fs)
	}
	vx := findingWith(fs, vxlanCase)
	if len(vx) != 1 || vx[0].Severity != finding.Medium ||
		!slices.Equal(findingNodes(vx[0]), []string{"centos-0", "xenial-0"}) ||
		!checktest.HasObject(vx, "DaemonSet", "kube-flannel", "kube-flannel-ds") ||
		!strings.Contains(strings.Join(vx[0].Evidence, "\n"), "Backend Type vxlan") ||
		!strings.Contains(strings.Join(vx[0].Evidence, "\n"), "kube-proxy 1.17.4") {
		t.Errorf("VXLAN finding: %+v, want one medium naming centos-0 and xenial-0 and the flannel DaemonSet", vx)
	}
	masq := findingWith(fs, snatCase)
	if len(masq) != 1 || masq[0].Severity != finding.Medium ||
		!checktest.HasObject(masq, "DaemonSet", "kube-flannel", "kube-flannel-ds") ||
		!strings.Contains(strings.Join(masq[0].Evidence, "\n"), "flannel 0.10.0, before 0.11.0") {
		t.Errorf("masquerade finding: %+v, want one medium naming the flannel 0.10.0 DaemonSet", masq)
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v on a complete input", ctx.Notes())
	}
}

func TestDataplaneOverlayClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/overlay-clean.yaml"))
	checktest.Quiet(t, dataplaneNodeCompatCheck(), s)
}

// Open world: the flannel ConfigMap is not in the input, so the backend is
// unknown and the overlay rule is partial; the masquerade rule, which
// needs only the DaemonSet, still fires.
func TestDataplaneOverlayUnknownBackendIsPartial(t *testing.T) {
	s := checktest.Load(t, "dataplane-node-compat/overlay-gap.yaml")
	s.ConfigMaps = nil
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if _, ok := ctx.Notes()[ruleVXLANOffload]; !ok {
		t.Errorf("no note on %s without the flannel ConfigMap: %v", ruleVXLANOffload, ctx.Notes())
	}
	if len(findingWith(fs, vxlanCase)) != 0 || len(findingWith(fs, snatCase)) != 1 {
		t.Errorf("findings %+v, want only the masquerade one", fs)
	}
	// Complete ConfigMaps without it: it does not exist, still not a pass.
	s = checktest.Complete(checktest.Load(t, "dataplane-node-compat/overlay-gap.yaml"))
	s.ConfigMaps = nil
	_, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if n, ok := ctx.Notes()[ruleVXLANOffload]; !ok || !strings.Contains(n.Reason, "does not exist") {
		t.Errorf("note %+v, want the missing ConfigMap named", n)
	}
}

// Without a kube-proxy DaemonSet (kube-proxy on the host) the kubelet's
// version stands in; a host-gw backend is not judged.
func TestDataplaneOverlayKubeletAndBackend(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/overlay-gap.yaml"))
	s.DaemonSets = slices.DeleteFunc(s.DaemonSets, func(d appsv1.DaemonSet) bool { return d.Name == "kube-proxy" })
	fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	vx := findingWith(fs, vxlanCase)
	if len(vx) != 1 || !strings.Contains(strings.Join(vx[0].Evidence, "\n"), "kubelet (no kube-proxy image version") {
		t.Errorf("VXLAN finding from kubelet versions: %+v", vx)
	}
	s.ConfigMaps[0].Data["net-conf.json"] = `{"Network": "10.244.0.0/16", "Backend": {"Type": "host-gw"}}`
	fs, _, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if got := findingWith(fs, vxlanCase); len(got) != 0 {
		t.Errorf("host-gw backend: %+v, want no VXLAN finding", got)
	}
}

// Canal sets --ip-masq through FLANNELD_IP_MASQ from canal-config; the
// disable flag brings the race back on any release.
func TestDataplaneMasqueradeFlags(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/overlay-clean.yaml"))
	i := slices.IndexFunc(s.DaemonSets, func(d appsv1.DaemonSet) bool { return d.Name == "kube-flannel-ds" })
	c := &s.DaemonSets[i].Spec.Template.Spec.Containers[0]
	c.Image = "ghcr.io/flannel-io/flannel:v0.28.0"
	c.Args = []string{"--kube-subnet-mgr", "--ip-masq-fully-random-disable"}
	c.Env = []corev1.EnvVar{{Name: "FLANNELD_IP_MASQ", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "canal-config"}, Key: "masquerade"}}}}
	s.ConfigMaps = append(s.ConfigMaps, corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-flannel", Name: "canal-config"},
		Data: map[string]string{"masquerade": "true"}})
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v with FLANNELD_IP_MASQ readable", ctx.Notes())
	}
	if got := findingWith(fs, snatCase); len(got) != 1 || !strings.Contains(got[0].Evidence[0], "--ip-masq-fully-random-disable") {
		t.Errorf("disable flag: %+v, want one masquerade finding naming it", got)
	}
	c.Args = []string{"--kube-subnet-mgr"}
	fs, _, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if got := findingWith(fs, snatCase); len(got) != 0 {
		t.Errorf("0.28.0 with random-fully: %+v, want none", got)
	}
	s.ConfigMaps = s.ConfigMaps[:len(s.ConfigMaps)-1]
	_, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if _, ok := ctx.Notes()[ruleMasqRandom]; !ok {
		t.Errorf("FLANNELD_IP_MASQ from a ConfigMap not in the input must leave %s partial", ruleMasqRandom)
	}
}

func TestVXLANKubeProxyRange(t *testing.T) {
	f, err := loadDataplaneFacts()
	if err != nil || len(f.VXLANOffload) != 1 {
		t.Fatalf("facts: %v", err)
	}
	r := &f.VXLANOffload[0]
	for v, want := range map[string]bool{"1.15.12": false, "1.16.9": true, "1.16.12": true, "1.16.13": false, "1.16.15": false, "1.17.8": true, "1.17.9": false,
		"1.18.5": true, "1.18.6": false, "1.19.0": false, "1.30.1": false} {
		k, _ := check.ParseKubeVersion(v)
		if got := r.kubeProxyAffected(k); got != want {
			t.Errorf("kube-proxy %s affected %v, want %v", v, got, want)
		}
	}
}

// Calico before 3.19.2 with an enabled VXLAN IPPool is judged like Flannel;
// 3.19.2 and 3.20.0 turn the offload off themselves, a pool in IP-in-IP
// mode is no overlay here, and IPPools not in the input leave the rule
// partial.
func TestDataplaneCalicoVXLAN(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/calico-gap.yaml"))
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	vx := findingWith(fs, vxlanCase)
	if len(vx) != 1 || !slices.Equal(findingNodes(vx[0]), []string{"centos-0", "xenial-0"}) ||
		!checktest.HasObject(vx, "DaemonSet", "kube-system", "calico-node") ||
		!strings.Contains(strings.Join(vx[0].Evidence, "\n"), "IPPool default-ipv4-ippool: vxlanMode Always") ||
		len(ctx.Notes()) != 0 {
		t.Fatalf("Calico 3.18.4: %+v, notes %v; want one finding naming calico-node, centos-0 and xenial-0", vx, ctx.Notes())
	}
	i := slices.IndexFunc(s.DaemonSets, func(d appsv1.DaemonSet) bool { return d.Name == "calico-node" })
	c := &s.DaemonSets[i].Spec.Template.Spec.Containers[0]
	for image, want := range map[string]int{"docker.io/calico/node:v3.19.1": 1, "docker.io/calico/node:v3.19.2": 0,
		"quay.io/calico/node:v3.20.0": 0, "rancher/mirrored-calico-node:v3.17.2": 1, "docker.io/calico/node:v3.26.1": 0} {
		c.Image = image
		fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
		if got := len(findingWith(fs, vxlanCase)); got != want {
			t.Errorf("%s: %d VXLAN findings, want %d", image, got, want)
		}
	}
	c.Image = "docker.io/calico/node:v3.18.4"
	for _, p := range s.CustomObjects(snapshot.CalicoIPPools) {
		if err := unstructured.SetNestedField(p.Object, "Never", "spec", "vxlanMode"); err != nil {
			t.Fatal(err)
		}
	}
	if fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s); len(findingWith(fs, vxlanCase)) != 0 {
		t.Errorf("IPPools without VXLAN: %+v, want no VXLAN finding", fs)
	}
	s = checktest.Load(t, "dataplane-node-compat/calico-gap.yaml")
	s.Custom = nil
	fs, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if _, ok := ctx.Notes()[ruleVXLANOffload]; !ok || len(findingWith(fs, vxlanCase)) != 0 {
		t.Errorf("no IPPools in the input: findings %+v, notes %v; want a partial rule", fs, ctx.Notes())
	}
}

// Calico masquerades for IPPools with natOutgoing; Felix uses
// --random-fully from 3.2.4 and 3.3.0.
func TestDataplaneCalicoMasquerade(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/calico-gap.yaml"))
	i := slices.IndexFunc(s.DaemonSets, func(d appsv1.DaemonSet) bool { return d.Name == "calico-node" })
	c := &s.DaemonSets[i].Spec.Template.Spec.Containers[0]
	for image, want := range map[string]int{"quay.io/calico/node:v3.2.3": 1, "quay.io/calico/node:v3.2.4": 0,
		"quay.io/calico/node:v3.1.6": 1, "quay.io/calico/node:v3.3.0": 0, "docker.io/calico/node:v3.18.4": 0} {
		c.Image = image
		fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
		got := findingWith(fs, snatCase)
		if len(got) != want || len(ctx.Notes()) != 0 {
			t.Errorf("%s: %+v, notes %v; want %d masquerade findings", image, got, ctx.Notes(), want)
		}
		if want == 1 && (!checktest.HasObject(got, "DaemonSet", "kube-system", "calico-node") ||
			!strings.Contains(got[0].Evidence[0], "IPPool default-ipv4-ippool has natOutgoing")) {
			t.Errorf("%s: %+v, want calico-node and the natOutgoing pool named", image, got)
		}
	}
	c.Image = "quay.io/calico/node:v3.2.3"
	for _, p := range s.CustomObjects(snapshot.CalicoIPPools) {
		if err := unstructured.SetNestedField(p.Object, false, "spec", "natOutgoing"); err != nil {
			t.Fatal(err)
		}
	}
	if fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s); len(findingWith(fs, snatCase)) != 0 {
		t.Errorf("no natOutgoing pool: %+v, want no masquerade finding", fs)
	}
}

// Before the move to 1.17 that kubernetes#91519 ties the delay to, a 1.16
// cluster on the same VXLAN pool and kernels is already flagged: the table
// counts 1.16 kube-proxies as affected.
func TestDataplaneOverlayBefore117(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/calico-before-117.yaml"))
	fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	vx := findingWith(fs, vxlanCase)
	if len(vx) != 1 || vx[0].Severity != finding.Medium ||
		!slices.Equal(findingNodes(vx[0]), []string{"centos-0", "xenial-0"}) ||
		!strings.Contains(strings.Join(vx[0].Evidence, "\n"), "kube-proxy 1.16.9") {
		t.Errorf("VXLAN finding on 1.16: %+v, want one medium naming centos-0 and xenial-0", vx)
	}
}

// calico-node 3.24.1 with FELIX_IPTABLESBACKEND=Auto on a RHEL 8 worker
// (projectcalico/calico#7393) is medium, naming the DaemonSet and the RHEL
// 8 node only; unset is the same from 3.17 (Felix's default before was
// Legacy), Legacy or NFT by hand and 3.25.2 or 3.26 are quiet, and a value
// from a ConfigMap leaves the rule partial.
func TestDataplaneCalicoIPTablesAuto(t *testing.T) {
	const calicoCase = "el8-el9-iptables-backend-mismatch-calico-kube-proxy-2023-2025"
	s := checktest.Complete(checktest.Load(t, "dataplane-node-compat/calico-auto-gap.yaml"))
	fs, ctx, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	got := findingWith(fs, calicoCase)
	if len(got) != 1 || got[0].Severity != finding.Medium || !checktest.HasObject(got, "DaemonSet", "kube-system", "calico-node") ||
		!slices.Equal(findingNodes(got[0]), []string{"rhel8-worker-0"}) || len(ctx.Notes()) != 0 {
		t.Fatalf("findings %+v, notes %v", got, ctx.Notes())
	}
	// The variable is named, its value (Auto) never printed.
	if ev := strings.Join(got[0].Evidence, "\n"); !strings.Contains(ev, "FELIX_IPTABLESBACKEND is set") || strings.Contains(ev, "Auto") ||
		!strings.Contains(ev, "https://github.com/projectcalico/calico/issues/7393") {
		t.Errorf("evidence %v", got[0].Evidence)
	}
	c := &s.DaemonSets[0].Spec.Template.Spec.Containers[0]
	env := c.Env
	for _, tc := range []struct {
		image string
		env   []corev1.EnvVar
		want  int
	}{
		{"docker.io/calico/node:v3.24.1", nil, 1},
		{"docker.io/calico/node:v3.24.1", []corev1.EnvVar{{Name: "FELIX_IPTABLESBACKEND", Value: "auto"}}, 1},
		{"docker.io/calico/node:v3.24.1", []corev1.EnvVar{{Name: "FELIX_IPTABLESBACKEND", Value: "Legacy"}}, 0},
		// Before 3.17 Felix's default was Legacy: unset is not detection,
		// Auto set by hand is.
		{"docker.io/calico/node:v3.16.5", nil, 0},
		{"docker.io/calico/node:v3.16.5", []corev1.EnvVar{{Name: "FELIX_IPTABLESBACKEND", Value: "Auto"}}, 1},
		{"docker.io/calico/node:v3.17.0", nil, 1},
		{"docker.io/calico/node:v3.25.1", env, 1},
		{"docker.io/calico/node:v3.25.2", env, 0},
		{"quay.io/calico/node:v3.26.1", env, 0},
	} {
		c.Image, c.Env = tc.image, tc.env
		fs, _, _ := checktest.Run(t, dataplaneNodeCompatCheck(), s)
		got := findingWith(fs, calicoCase)
		if len(got) != tc.want {
			t.Errorf("%s %v: %+v, want %d", tc.image, tc.env, got, tc.want)
		}
		// Unset, a FelixConfiguration kubegap does not read may still
		// choose the backend: the finding says so.
		if len(got) == 1 && tc.env == nil && (!strings.Contains(got[0].Title, "leaves the iptables backend to automatic detection") ||
			!strings.Contains(strings.Join(got[0].Evidence, "\n"), "FelixConfiguration, which kubegap does not read")) {
			t.Errorf("%s unset: title %q evidence %v", tc.image, got[0].Title, got[0].Evidence)
		}
	}
	c.Image = "docker.io/calico/node:v3.24.1"
	c.Env = []corev1.EnvVar{{Name: "FELIX_IPTABLESBACKEND", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "calico-config"}, Key: "backend"}}}}
	fs, ctx, _ = checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if _, ok := ctx.Notes()[ruleCalicoAuto]; !ok || len(findingWith(fs, calicoCase)) != 0 {
		t.Errorf("backend from a ConfigMap: findings %+v, notes %v; want a partial rule", fs, ctx.Notes())
	}
	checktest.Quiet(t, dataplaneNodeCompatCheck(), checktest.Complete(checktest.Load(t, "dataplane-node-compat/calico-auto-clean.yaml")))
}
