package upgrade

import (
	"slices"
	"strings"
	"testing"

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
	} {
		if _, err := parseAddonFacts([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
