package upgrade

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

func addonFindings(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, "supports Kubernetes up to") {
			out = append(out, f)
		}
	}
	return out
}

// TestAddonCompat: at a 1.22 target the v0.49.3 controller (tabled up to
// 1.21) is a high "before" finding citing the 1.22 case and the v1.12.1 one
// (up to 1.32) is silent; at 1.33 the v1.12.1 one is named too.
func TestAddonCompat(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "ingress-nginx.yaml")), "v1.21.14")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.22"))
	got := addonFindings(fs)
	if len(got) != 1 || !checktest.HasObject(got, "Deployment", "ingress-legacy", "ingress-nginx-controller") ||
		got[0].Severity != finding.High || got[0].Preflight != finding.PreflightBefore ||
		!slices.Contains(got[0].Cases, caseIngressNginxV0) || !strings.Contains(got[0].Message, "1.19 to 1.21") {
		t.Fatalf("at 1.22: %+v", got)
	}
	if !strings.Contains(strings.Join(got[0].Evidence, " "), "https://github.com/kubernetes/ingress-nginx/") {
		t.Errorf("no source in evidence: %v", got[0].Evidence)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" || n.Skipped {
		t.Errorf("every controller is tabled, yet %+v", n)
	}

	s = at(checktest.Complete(checktest.Load(t, "ingress-nginx.yaml")), "v1.32.3")
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.33"))
	got = addonFindings(fs)
	if len(got) != 2 || !checktest.HasObject(got, "DaemonSet", "ingress-nginx", "ingress-nginx-controller") {
		t.Errorf("at 1.33: %+v", got)
	}
}

// TestAddonCompatSupported: a release whose table lists the target is
// silent and the rule is evaluated.
func TestAddonCompatSupported(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "ingress-nginx.yaml")), "v1.31.5")
	s.Deployments = s.Deployments[1:] // only the plain nginx left
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.32"))
	if got := addonFindings(fs); len(got) != 0 {
		t.Errorf("v1.12.1 lists 1.32: %+v", got)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" {
		t.Errorf("note = %+v", n)
	}
}

// TestAddonCompatUnknownRelease: a tag the table does not list, or an
// image pinned by digest alone, is unknown: no finding, a partial note.
func TestAddonCompatUnknownRelease(t *testing.T) {
	for _, image := range []string{
		"registry.k8s.io/ingress-nginx/controller:v1.12.99",
		"registry.k8s.io/ingress-nginx/controller@sha256:594ceea76b01c592858f803f9ff4d2cb40542cae2060410b2c95f75907d659e1",
	} {
		s := at(checktest.Complete(checktest.Load(t, "ingress-nginx.yaml")), "v1.31.5")
		s.Deployments = s.Deployments[1:]
		s.DaemonSets[0].Spec.Template.Spec.Containers[0].Image = image
		fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.40"))
		if got := addonFindings(fs); len(got) != 0 {
			t.Errorf("%s: %+v", image, got)
		}
		if n := ctx.Notes()[ruleAddonCompat]; !strings.Contains(n.Reason, "ingress-nginx") {
			t.Errorf("%s: unknown release, yet note = %+v", image, n)
		}
	}
}

func TestAddonFactsParse(t *testing.T) {
	f, err := loadAddonFacts()
	if err != nil {
		t.Fatal(err)
	}
	a := f.byImage["registry.k8s.io/ingress-nginx/controller"]
	if a == nil || a.byVersion["v1.10.0"] == nil || a.byVersion["v1.10.0"].newest.MinorString() != "1.29" ||
		a.byVersion["v1.10.1"].newest.MinorString() != "1.30" {
		t.Fatalf("ingress-nginx table = %+v", a)
	}
	for name, doc := range map[string]string{
		"unsourced row": "addons: [{name: x, images: [r/x], case: c, sources: [https://x], releases: [{versions: [v1], kubernetes: ['1.2']}]}]",
		"http":          "addons: [{name: x, images: [r/x], case: c, sources: [http://x]}]",
		"no case":       "addons: [{name: x, images: [r/x], sources: [https://x]}]",
		"bad minor":     "addons: [{name: x, images: [r/x], case: c, sources: [https://x], releases: [{versions: [v1], kubernetes: [one], sources: [https://x]}]}]",
		"twice":         "addons: [{name: x, images: [r/x], case: c, sources: [https://x], releases: [{versions: [v1], kubernetes: ['1.2'], sources: [https://x]}, {versions: [v1], kubernetes: ['1.3'], sources: [https://x]}]}]",
		"unknown":       "colour: red",
		"bad basis":     "addons: [{name: x, images: [r/x], case: c, basis: maybe, sources: [https://x]}]",
		"bad line":      "addons: [{name: x, images: [r/x], case: c, sources: [https://x], releases: [{lines: [v3], kubernetes: ['1.2'], sources: [https://x]}]}]",
	} {
		if _, err := parseAddonFacts([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func addonTitles(fs []finding.Finding) []finding.Finding {
	var out []finding.Finding
	for _, f := range fs {
		if strings.Contains(f.Title, "is not tested on Kubernetes") || strings.Contains(f.Title, "kubeadm deploys") {
			out = append(out, f)
		}
	}
	return out
}

// TestAddonCompatTested: from 1.29 to 1.30 only Calico v3.27.3 (tested up
// to 1.29) is named, medium and "fix before", citing the Calico case; the
// managed providers' builds are not judged and leave no unknown.
func TestAddonCompatTested(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "cni-coredns.yaml")), "v1.29.4")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.30"))
	got := addonTitles(fs)
	if len(got) != 1 || !checktest.HasObject(got, "DaemonSet", "calico-system", "calico-node") ||
		got[0].Severity != finding.Medium || got[0].Preflight != finding.PreflightBefore ||
		!slices.Contains(got[0].Cases, "reddit-pi-day-calico-master-label-2023") ||
		!strings.Contains(got[0].Message, "tested: 1.27 to 1.29") {
		t.Fatalf("at 1.30: %+v", got)
	}
	if !strings.Contains(strings.Join(got[0].Evidence, " "), "https://github.com/tigera/docs/blob/") {
		t.Errorf("no source in evidence: %v", got[0].Evidence)
	}
	if n := ctx.Notes()[ruleAddonCompat]; n.Reason != "" {
		t.Errorf("every matched image is tabled, yet %+v", n)
	}
}

// TestAddonCompatTestedAndKubeadm: from 1.31 to 1.32 Cilium v1.16.5 (tested
// up to 1.30) joins Calico, and CoreDNS v1.11.1 (kubeadm 1.29 to 1.31) is a
// low "watch during" finding citing the CoreDNS case. No finding is high.
func TestAddonCompatTestedAndKubeadm(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "cni-coredns.yaml")), "v1.31.2")
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.32"))
	got := addonTitles(fs)
	if len(got) != 3 || !checktest.HasObject(got, "DaemonSet", "kube-system", "cilium") {
		t.Fatalf("at 1.32: %+v", got)
	}
	for _, f := range got {
		if f.Severity >= finding.High {
			t.Errorf("a tested-on or kubeadm table is not a support statement: %+v", f)
		}
		if strings.Contains(f.Title, "CoreDNS") && (f.Severity != finding.Low || f.Preflight != finding.PreflightDuring ||
			!slices.Contains(f.Cases, "coredns-endpointslice-v1beta1-after-upgrade-2023") ||
			!checktest.HasObject([]finding.Finding{f}, "Deployment", "kube-system", "coredns")) {
			t.Errorf("CoreDNS finding: %+v", f)
		}
		if checktest.HasObject([]finding.Finding{f}, "DaemonSet", "aks-calico", "calico-node") ||
			checktest.HasObject([]finding.Finding{f}, "Deployment", "eks-dns", "coredns") {
			t.Errorf("a managed provider's build was judged: %+v", f)
		}
	}
}

// TestAddonCompatWithoutTarget: without --target-version the preflight is
// not evaluated and says nothing about the same cluster.
func TestAddonCompatWithoutTarget(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "cni-coredns.yaml")), "v1.31.2")
	fs, err := upgradePreflightCheck().Run(&check.Context{Snapshot: s})
	if err == nil || len(fs) != 0 {
		t.Fatalf("without a target: %v, %+v", err, fs)
	}
}

// TestAddonCompatReleaseLines: a Calico patch release is found through its
// line; a Cilium tag between two lists that differ (v1.19.2) is unknown and
// leaves the rule partial.
func TestAddonCompatReleaseLines(t *testing.T) {
	f, err := loadAddonFacts()
	if err != nil {
		t.Fatal(err)
	}
	calico := f.byImage["quay.io/calico/node"]
	if r := calico.release("v3.30.4"); r == nil || r.newest.MinorString() != "1.35" {
		t.Errorf("v3.30.4: %+v", r)
	}
	if r := calico.release("v3.3.1"); r != nil {
		t.Errorf("v3.3.1 matched line %v", r.Lines)
	}
	s := at(checktest.Complete(checktest.Load(t, "cni-coredns.yaml")), "v1.31.2")
	s.DaemonSets[1].Spec.Template.Spec.Containers[0].Image = "quay.io/cilium/cilium:v1.19.2"
	_, ctx := runWith(t, upgradePreflightCheck(), s, target("1.32"))
	if n := ctx.Notes()[ruleAddonCompat]; !strings.Contains(n.Reason, "Cilium v1.19.2") {
		t.Errorf("unknown Cilium release, yet note = %+v", n)
	}
}

// TestAddonTablesSourced: every add-on and every release row carries an
// https source (parseAddonFacts refuses one without; this pins that each
// new table went through it) and a basis.
func TestAddonTablesSourced(t *testing.T) {
	f, err := loadAddonFacts()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range f.Addons {
		names[a.Name] = true
		if a.Basis == "" || len(a.Sources) == 0 {
			t.Errorf("%s: basis %q, sources %v", a.Name, a.Basis, a.Sources)
		}
		for _, r := range a.Releases {
			if len(r.Sources) == 0 {
				t.Errorf("%s %v%v: no source", a.Name, r.Versions, r.Lines)
			}
		}
	}
	for _, want := range []string{"ingress-nginx", "Calico", "Cilium", "CoreDNS", "Rook", "Trident"} {
		if !names[want] {
			t.Errorf("no %s table", want)
		}
	}
}

// TestFactsFilesSourced applies the shared sourcing rules (every table row
// has https sources) to data/addon-compat.yaml and data/upgrade-facts.yaml.
func TestFactsFilesSourced(t *testing.T) { checktest.FactsSourced(t) }
