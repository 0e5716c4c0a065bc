package upgrade

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

// TestK3sFlannelBackend: a v1.25.4 k3s cluster on the old wireguard
// backend is high going to 1.26 (node-args names it), medium from the
// backend type alone, silent going to 1.25.x and after the migration to
// wireguard-native.
func TestK3sFlannelBackend(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "k3s/flannel-gap.yaml")), "v1.25.4+k3s1")
	fs, ctx := runWith(t, upgradePreflightCheck(), s, target("1.26"))
	got := byTitle(fs, "refuses the flannel wireguard backend")
	if len(got) != 1 || got[0].Severity != finding.High || got[0].Preflight != finding.PreflightBefore ||
		!checktest.HasObject(got, "Node", "", "k3s-server-1") || !checktest.HasObject(got, "Node", "", "k3s-agent-1") ||
		!citesCase(got[0], caseK3sFlannel) {
		t.Fatalf("wireguard backend going to 1.26: %+v", fs)
	}
	if !strings.Contains(strings.Join(got[0].Evidence, "\n"), "Node/k3s-server-1: annotation k3s.io/node-args names --flannel-backend wireguard") {
		t.Errorf("evidence does not quote the server's node-args: %v", got[0].Evidence)
	}
	if n := ctx.Notes()[ruleK3sFlannelBackend]; n.Reason != "" {
		t.Errorf("every node's backend is known, yet: %+v", n)
	}

	// Without node-args the extension type alone is medium: a custom
	// --flannel-conf can choose it too.
	s = at(checktest.Complete(checktest.Load(t, "k3s/flannel-gap.yaml")), "v1.25.4+k3s1")
	for i := range s.Nodes {
		delete(s.Nodes[i].Annotations, annotationK3sNodeArgs)
	}
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.27"))
	if got := byTitle(fs, "refuses the flannel wireguard backend"); len(got) != 1 || got[0].Severity != finding.Medium {
		t.Errorf("backend type only: %+v", got)
	}

	// Neither annotation: unknown, the rule partial.
	for i := range s.Nodes {
		s.Nodes[i].Annotations = nil
	}
	fs, ctx = runWith(t, upgradePreflightCheck(), s, target("1.26"))
	if len(byTitle(fs, "flannel")) != 0 || ctx.Notes()[ruleK3sFlannelBackend].Reason == "" {
		t.Errorf("no annotations: findings %+v, notes %+v", fs, ctx.Notes())
	}

	// A 1.25 patch still accepts it.
	s = at(checktest.Complete(checktest.Load(t, "k3s/flannel-gap.yaml")), "v1.25.4+k3s1")
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.25.16"))
	if len(byTitle(fs, "flannel")) != 0 {
		t.Errorf("going to 1.25.16: %+v", fs)
	}

	s = at(checktest.Complete(checktest.Load(t, "k3s/flannel-ok.yaml")), "v1.25.4+k3s1")
	fs, ctx = runWith(t, upgradePreflightCheck(), s, target("1.27"))
	if len(byTitle(fs, "flannel")) != 0 || ctx.Notes()[ruleK3sFlannelBackend].Reason != "" {
		t.Errorf("wireguard-native: findings %+v, notes %+v", fs, ctx.Notes())
	}
}

// TestK3sFlannelIPsec: the ipsec backend is refused from 1.27, not at 1.26.
func TestK3sFlannelIPsec(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "k3s/flannel-gap.yaml")), "v1.25.4+k3s1")
	for i := range s.Nodes {
		s.Nodes[i].Annotations[annotationFlannelBackendType] = "ipsec"
	}
	for i := range s.Nodes {
		if s.Nodes[i].Name == "k3s-server-1" {
			s.Nodes[i].Annotations[annotationK3sNodeArgs] = `["server","--flannel-backend","ipsec"]`
		}
	}
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.26"))
	if len(byTitle(fs, "flannel")) != 0 {
		t.Errorf("ipsec at 1.26: %+v", fs)
	}
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.27"))
	if got := byTitle(fs, "refuses the flannel ipsec backend"); len(got) != 1 || got[0].Severity != finding.High || len(got[0].Objects) != 2 {
		t.Errorf("ipsec at 1.27: %+v", fs)
	}
}

// TestK3sTraefikMajor: the packaged Traefik v2 of a v1.31.5 k3s cluster is
// named going to 1.32.5 and to 1.33, with the patch caveat going to "1.32",
// not going to 1.32.1; Traefik v3 and non-k3s clusters are silent.
func TestK3sTraefikMajor(t *testing.T) {
	s := at(checktest.Complete(checktest.Load(t, "k3s/traefik-gap.yaml")), "v1.31.5+k3s1")
	for _, tv := range []string{"1.32.5", "1.33"} {
		fs, ctx := runWith(t, upgradePreflightCheck(), s, target(tv))
		got := byTitle(fs, "replaces the packaged Traefik v2 with v3")
		if len(got) != 1 || got[0].Severity != finding.Medium || !checktest.HasObject(got, "Deployment", "kube-system", "traefik") ||
			!citesCase(got[0], caseK3sTraefik) || strings.Contains(got[0].Message, "unless it stops") {
			t.Errorf("going to %s: %+v", tv, fs)
		}
		if ctx.Notes()[ruleK3sTraefikMajor].Reason == "" {
			t.Errorf("going to %s: IngressRoutes are not read, yet the rule is complete", tv)
		}
	}
	fs, _ := runWith(t, upgradePreflightCheck(), s, target("1.32"))
	if got := byTitle(fs, "replaces the packaged Traefik"); len(got) != 1 || !strings.Contains(got[0].Message, "unless it stops at an earlier patch") {
		t.Errorf("going to 1.32: %+v", got)
	}
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.32.1"))
	if got := byTitle(fs, "Traefik"); len(got) != 0 {
		t.Errorf("going to 1.32.1, which still bundles v2: %+v", got)
	}

	ok := at(checktest.Complete(checktest.Load(t, "k3s/traefik-ok.yaml")), "v1.32.2+k3s1")
	fs, ctx := runWith(t, upgradePreflightCheck(), ok, target("1.33"))
	if len(byTitle(fs, "Traefik")) != 0 || ctx.Notes()[ruleK3sTraefikMajor].Reason != "" {
		t.Errorf("Traefik v3: findings %+v, notes %+v", fs, ctx.Notes())
	}

	// The same Deployment on nodes that are not k3s's is not k3s's bundle.
	s = at(checktest.Complete(checktest.Load(t, "k3s/traefik-gap.yaml")), "v1.31.5")
	s.Nodes[0].Status.NodeInfo.KubeletVersion = "v1.31.5"
	fs, _ = runWith(t, upgradePreflightCheck(), s, target("1.33"))
	if len(byTitle(fs, "Traefik")) != 0 {
		t.Errorf("not k3s: %+v", fs)
	}
}
