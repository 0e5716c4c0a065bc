package runtime

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
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
	fs, ctx, ok := checktest.Run(t, dataplaneNodeCompatCheck(), s)
	if !ok || len(fs) != 0 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
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
