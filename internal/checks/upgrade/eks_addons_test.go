package upgrade

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// eksAddonFindings are the preflight findings of the EKS add-on rule.
func eksAddonFindings(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if strings.HasPrefix(f.Title, "EKS ") && strings.Contains(f.Title, "the EKS user guide lists") {
			out = append(out, f)
		}
	}
	return out
}

func eksAddonsFixture(t *testing.T, file, server string) *snapshot.Snapshot {
	t.Helper()
	return at(checktest.Complete(checktest.Load(t, file)), server)
}

func byAddon(fs []finding.Finding, title string) *finding.Finding {
	for i := range fs {
		if strings.HasPrefix(fs[i].Title, "EKS "+title+" ") {
			return &fs[i]
		}
	}
	return nil
}

// TestEKSAddonsOutsideTargetRow: an EKS 1.32 cluster with the VPC CNI on
// v1.18.3 and CoreDNS on v1.11.4, upgrading to 1.33. The VPC CNI's 1.33
// row (v1.20.1-eksbuild.3) is also the 1.32 row, so it is fixed before,
// in two minor steps; CoreDNS's 1.33 row (1.12.4) is newer than the 1.32
// one, so it is updated after the control plane. kube-proxy, which cannot
// be at 1.33 before the control plane, is not judged.
func TestEKSAddonsOutsideTargetRow(t *testing.T) {
	fs, ctx := runWith(t, upgradePreflightCheck(), eksAddonsFixture(t, "eks-addons.yaml", "v1.32.9-eks-1a2b3c4"), target("1.33"))
	got := eksAddonFindings(fs)
	if len(got) != 2 {
		t.Fatalf("%d EKS add-on findings, want 2 (VPC CNI, CoreDNS): %+v", len(got), got)
	}
	cni := byAddon(got, "Amazon VPC CNI")
	if cni == nil || cni.Severity != finding.Medium || cni.Preflight != finding.PreflightBefore ||
		!strings.Contains(cni.Title, "v1.20.1-eksbuild.3") || !strings.Contains(cni.Title, "1.33") {
		t.Fatalf("VPC CNI finding %+v", cni)
	}
	for _, want := range []string{
		"aws eks update-addon --cluster-name <cluster-name> --addon-name vpc-cni --addon-version v1.20.1-eksbuild.3 --resolve-conflicts PRESERVE",
		"<cluster-name> is a placeholder",
		"v1.19 → v1.20",
		"vpc-add-on-self-managed-update",
	} {
		if !strings.Contains(cni.Remediation, want) {
			t.Errorf("VPC CNI remediation lacks %q: %s", want, cni.Remediation)
		}
	}
	if !slices.Contains(cni.Objects, finding.ObjectRef{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "aws-node"}) {
		t.Errorf("VPC CNI finding objects %v", cni.Objects)
	}
	dnsF := byAddon(got, "CoreDNS")
	if dnsF == nil || dnsF.Severity != finding.Medium || dnsF.Preflight != finding.PreflightDuring ||
		!strings.Contains(dnsF.Title, "1.12.4") || !slices.Contains(dnsF.Cases, caseDFDSCoreDNS) ||
		!strings.Contains(dnsF.Remediation, "--addon-version <version>") || !strings.Contains(dnsF.Remediation, "describe-addon-versions --addon-name coredns --kubernetes-version 1.33") {
		t.Errorf("CoreDNS finding %+v", dnsF)
	}
	if byAddon(got, "kube-proxy") != nil {
		t.Error("kube-proxy judged against the 1.33 row before the control plane is there")
	}
	if n := ctx.Notes()[ruleEKSAddons]; n.Reason != "" {
		t.Errorf("rule partial on a whole EKS read with exact rows: %s", n.Reason)
	}
	// Every evidence item quotes the fixture's real values.
	if n := checktest.EvidenceTrue(t, got, "eks-addons.yaml"); n < 2 {
		t.Errorf("%d evidence items verified, want one per finding", n)
	}
}

// TestEKSAddonsAtTargetRow: the same cluster with its add-ons at the rows
// gets no EKS add-on finding, and the rule is evaluated (not partial).
func TestEKSAddonsAtTargetRow(t *testing.T) {
	fs, ctx := runWith(t, upgradePreflightCheck(), eksAddonsFixture(t, "eks-addons-current.yaml", "v1.32.9-eks-1a2b3c4"), target("1.33"))
	if got := eksAddonFindings(fs); len(got) != 0 {
		t.Errorf("findings at the target's rows: %+v", got)
	}
	if n := ctx.Notes()[ruleEKSAddons]; n.Reason != "" {
		t.Errorf("rule partial: %s", n.Reason)
	}
}

// TestEKSAddonsMidUpgradeKubeProxy: the control plane is already at 1.33
// and kube-proxy still on the 1.32 build: the last step of the EKS update
// guide is left, and kube-proxy is judged against the 1.33 row.
func TestEKSAddonsMidUpgradeKubeProxy(t *testing.T) {
	fs, _ := runWith(t, upgradePreflightCheck(), eksAddonsFixture(t, "eks-addons-current.yaml", "v1.33.5-eks-1a2b3c4"), target("1.33"))
	kp := byAddon(eksAddonFindings(fs), "kube-proxy")
	if kp == nil || kp.Severity != finding.Medium || kp.Preflight != finding.PreflightDuring ||
		!strings.Contains(kp.Remediation, "--addon-name kube-proxy --addon-version v1.33.10-eksbuild.13") {
		t.Fatalf("kube-proxy finding %+v", kp)
	}
	if n := checktest.EvidenceTrue(t, []finding.Finding{*kp}, "eks-addons-current.yaml"); n == 0 {
		t.Error("no evidence item quotes the kube-proxy image")
	}
}

// TestEKSAddonsPastTheTable: the VPC CNI table ends at 1.33. At 1.36 its
// newest row is a lower bound: a VPC CNI below it is still reported (with
// a <version> placeholder and the list command), one at or above it leaves
// the rule partial, never passed.
func TestEKSAddonsPastTheTable(t *testing.T) {
	s := eksAddonsFixture(t, "eks-addons.yaml", "v1.35.2-eks-1a2b3c4")
	s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/coredns:v1.14.3-eksbuild.3"
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.36"))
	cni := byAddon(eksAddonFindings(fs), "Amazon VPC CNI")
	if cni == nil || !strings.Contains(cni.Message, "lower bound") || !strings.Contains(cni.Remediation, "--addon-version <version>") ||
		!strings.Contains(cni.Remediation, "--kubernetes-version 1.36") {
		t.Fatalf("VPC CNI below the lower bound: %+v", cni)
	}
	setContainerImage(s, "aws-node", "602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.23.1")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.36"))
	if got := eksAddonFindings(fs); len(got) != 0 {
		t.Errorf("findings %+v, want none", got)
	}
	if n := ctx.Notes()[ruleEKSAddons]; !strings.Contains(n.Reason, "no row for 1.36") || n.Kind != check.NeedsKnowledge {
		t.Errorf("note %+v, want partial for want of a 1.36 row", n)
	}
}

// TestEKSAddonsUnknownIsPartial: what the input cannot tell leaves the
// rule partial, with the reason: no server version and nodes not read
// whole (is it EKS?), a mirrored image that is not AWS's build, and the
// add-on's workload missing from a partial read.
func TestEKSAddonsUnknownIsPartial(t *testing.T) {
	plain := checktest.Load(t, "eks-addons.yaml")
	plain.Nodes = nil
	_, ctx := runWith(t, upgradePreflightCheck(), plain, target("1.33"))
	if n := ctx.Notes()[ruleEKSAddons]; !strings.Contains(n.Reason, "whether this is an EKS cluster") {
		t.Errorf("unknown provider: note %+v", n)
	}

	s := eksAddonsFixture(t, "eks-addons.yaml", "v1.32.9-eks-1a2b3c4")
	setContainerImage(s, "aws-node", "registry.example.com/mirror/amazon-k8s-cni:v1.18.3-eksbuild.1")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.33"))
	if byAddon(eksAddonFindings(fs), "Amazon VPC CNI") != nil || !strings.Contains(ctx.Notes()[ruleEKSAddons].Reason, "not AWS's amazon-k8s-cni build") {
		t.Errorf("mirrored image: findings %v, note %+v", eksAddonFindings(fs), ctx.Notes()[ruleEKSAddons])
	}

	files := at(checktest.Load(t, "eks-addons.yaml"), "v1.32.9-eks-1a2b3c4")
	files.Deployments = nil
	_, ctx = runWith(t, upgradePreflightCheck(), files, target("1.33"))
	if !strings.Contains(ctx.Notes()[ruleEKSAddons].Reason, "Deployment kube-system/coredns is not in the input") {
		t.Errorf("missing CoreDNS in plain files: note %+v", ctx.Notes()[ruleEKSAddons])
	}

	// Not EKS and known not to be: nothing to judge, no note.
	aks := at(checktest.Complete(checktest.Load(t, "aks-134-fips.yaml")), "v1.34.9")
	_, ctx = runWith(t, upgradePreflightCheck(), aks, target("1.35"))
	if n, ok := ctx.Notes()[ruleEKSAddons]; ok {
		t.Errorf("AKS cluster: note %+v", n)
	}
}

func setContainerImage(s *snapshot.Snapshot, container, image string) {
	for i := range s.DaemonSets {
		cs := s.DaemonSets[i].Spec.Template.Spec.Containers
		for j := range cs {
			if cs[j].Name == container {
				cs[j].Image = image
			}
		}
	}
}

// TestEKSAddonFactsParse: the table loads, every row is sourced and names
// an -eksbuild version, and no row names a minor past the newest target
// kubegap judges; broken tables are refused.
func TestEKSAddonFactsParse(t *testing.T) {
	f, err := loadEKSAddons()
	if err != nil {
		t.Fatal(err)
	}
	newest, err := NewestKnownMinor()
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, a := range f.Addons {
		for _, r := range a.Rows {
			rows[a.Name]++
			if newest.Less(r.minor) {
				t.Errorf("%s row %s is past NewestKnownMinor %s", a.Name, r.Kubernetes, newest.MinorString())
			}
		}
	}
	if rows["vpc-cni"] == 0 || rows["kube-proxy"] == 0 {
		t.Errorf("rows per add-on %v", rows)
	}
	quoted := regexp.MustCompile(`"(1\.[0-9]+)"`)
	for _, m := range quoted.FindAllSubmatch(eksAddonsYAML, -1) {
		if v, ok := check.ParseKubeVersion(string(m[1])); ok && newest.Less(v) {
			t.Errorf("eks-addons.yaml names %s, past NewestKnownMinor %s", m[1], newest.MinorString())
		}
	}
	base := "updateGuide: {sources: [https://x]}\naddons:\n"
	for name, doc := range map[string]string{
		"unsourced row": base + "- {name: a, repository: r, workload: {kind: DaemonSet, namespace: n, name: w, container: c}, sources: [https://x], rows: [{kubernetes: '1.30', version: v1.2.3-eksbuild.1}]}",
		"http row":      base + "- {name: a, repository: r, workload: {kind: DaemonSet, namespace: n, name: w, container: c}, sources: [https://x], rows: [{kubernetes: '1.30', version: v1.2.3-eksbuild.1, sources: [http://x]}]}",
		"no build":      base + "- {name: a, repository: r, workload: {kind: DaemonSet, namespace: n, name: w, container: c}, sources: [https://x], rows: [{kubernetes: '1.30', version: v1.2.3, sources: [https://x]}]}",
		"no rows":       base + "- {name: a, repository: r, workload: {kind: DaemonSet, namespace: n, name: w, container: c}, sources: [https://x]}",
		"unknown field": base + "- {name: a, colour: red}",
		"no guide":      "addons: []",
	} {
		if _, err := parseEKSAddons([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestEKSAddonsManagedFixturesQuiet: the fresh managed fixtures, preflighted
// to the next minor as a routine upgrade, get no EKS add-on finding. On
// the EKS one (1.35 to 1.36, VPC CNI v1.23.1, CoreDNS v1.14.3) CoreDNS
// is at the 1.36 row and the VPC CNI at or above the newest row, which
// leaves the rule partial (the table has no 1.36 row), not passed.
func TestEKSAddonsManagedFixturesQuiet(t *testing.T) {
	for _, p := range []string{"aks", "eks", "gke", "k3s", "kind"} {
		t.Run(p, func(t *testing.T) {
			s, err := snapshot.LoadPaths([]string{"../testdata/managed/" + p})
			if err != nil {
				t.Fatal(err)
			}
			v, _, ok := check.ServerVersion(s)
			if !ok {
				t.Fatal("no server version")
			}
			v.Minor++
			fs, ctx := runWith(t, upgradePreflightCheck(), s, &v)
			if got := eksAddonFindings(fs); len(got) != 0 {
				t.Errorf("EKS add-on findings on a fresh %s cluster: %+v", p, got)
			}
			n, noted := ctx.Notes()[ruleEKSAddons]
			switch {
			case p == "eks" && !strings.Contains(n.Reason, "Amazon VPC CNI table has no row for 1.36"):
				t.Errorf("eks: note %+v, want partial for the VPC CNI past its table", n)
			case p != "eks" && noted:
				t.Errorf("%s is known not to be EKS, yet the rule says %+v", p, n)
			}
		})
	}
}

// TestEKSImageForms: AWS's add-on images come from an ECR registry of any
// Region (China's end in .amazonaws.com.cn) and carry -eksbuild and
// -minimal-eksbuild tags whose upstream version is what is compared.
func TestEKSImageForms(t *testing.T) {
	for image, want := range map[string]bool{
		"602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1":         true,
		"918309763551.dkr.ecr.cn-north-1.amazonaws.com.cn/eks/coredns:v1.11.4-eksbuild.2":        true,
		"602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.31.3-minimal-eksbuild.2": true,
		"registry.k8s.io/coredns/coredns:v1.11.4":                                                false,
		"mcr.microsoft.com/oss/v2/kubernetes/kube-proxy:v1.36.2-5":                               false,
		"public.ecr.aws/eks/aws-load-balancer-controller:v2.9.0":                                 false,
	} {
		if got := isECRImage(image); got != want {
			t.Errorf("isECRImage(%s) = %v, want %v", image, got, want)
		}
	}
	for tag, want := range map[string]string{"v1.31.3-minimal-eksbuild.2": "1.31.3", "v1.20.1-eksbuild.3": "1.20.1", "v1.23.1": "1.23.1"} {
		if v, ok := check.ParseKubeVersion(tag); !ok || v.String() != want {
			t.Errorf("%s parses as %v (%v), want %s", tag, v, ok, want)
		}
	}
}

// TestEKSAddonsInferredCurrentMinor: plain files without a version
// document, the kubelet at 1.32 and the target 1.33, pin the control plane
// to 1.32 from both sides: the VPC CNI update is still "fix before", and
// the finding says the version was inferred.
func TestEKSAddonsInferredCurrentMinor(t *testing.T) {
	fs, _ := runWith(t, upgradePreflightCheck(), checktest.Load(t, "eks-addons.yaml"), target("1.33"))
	cni := byAddon(eksAddonFindings(fs), "Amazon VPC CNI")
	if cni == nil || cni.Preflight != finding.PreflightBefore || !slices.ContainsFunc(cni.Evidence, func(e string) bool { return strings.HasPrefix(e, "control plane inferred at 1.32") }) {
		t.Fatalf("VPC CNI finding from files %+v", cni)
	}
}
