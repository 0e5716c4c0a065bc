package versions

import (
	"strings"
	"testing"
	"time"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
)

const addonEOLGap = "addon-end-of-life/gap.yaml"

func at(day string) func() time.Time {
	return func() time.Time {
		t, _ := time.Parse(time.DateOnly, day)
		return t
	}
}

// After 24 March 2026 both ingress-nginx controllers are high, whatever
// their tag; plain nginx is not an add-on.
func TestAddonEndOfLifeGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, addonEndOfLifeCheckAt(at("2026-12-02")), checktest.Complete(checktest.Load(t, addonEOLGap)))
	if !ok || len(fs) != 2 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	for _, want := range [][3]string{{"Deployment", "ingress-nginx", "ingress-nginx-controller"}, {"DaemonSet", "edge", "ingress-nginx-controller"}} {
		if sev, found := sevOf(fs, want[0], want[1], want[2]); !found || sev != finding.High {
			t.Errorf("%v: severity %v (found %v), want high", want, sev, found)
		}
	}
	for _, f := range fs {
		if f.Cases[0] != caseIngressEOL || !strings.Contains(f.Message, "v1.15.1, v1.14.5, v1.13.9") || !strings.Contains(f.Message, "2026-03-24") {
			t.Errorf("finding %+v", f)
		}
	}
	if n := checktest.EvidenceTrue(t, fs, addonEOLGap); n != 2 {
		t.Errorf("%d evidence items resolved, want 2", n)
	}
}

// Within six months of the end the rule warns (medium); earlier it is
// silent.
func TestAddonEndOfLifeBefore(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, addonEOLGap))
	fs, _, _ := checktest.Run(t, addonEndOfLifeCheckAt(at("2026-01-10")), s)
	if len(fs) != 2 || fs[0].Severity != finding.Medium || !strings.Contains(fs[0].Message, "in 73 days") {
		t.Errorf("findings %+v", fs)
	}
	checktest.Quiet(t, addonEndOfLifeCheckAt(at("2025-06-01")), s)
}

func TestAddonEndOfLifeClean(t *testing.T) {
	checktest.Quiet(t, addonEndOfLifeCheck(), checktest.Complete(checktest.Load(t, "addon-end-of-life/clean.yaml")))
}

// Every row of the table and of the other data files has https sources.
func TestVersionsFactsSourced(t *testing.T) { checktest.FactsSourced(t) }

const rke1Gap = "addon-end-of-life/rke1-gap.yaml"

// An RKE-built cluster is one high finding after 31 July 2025, naming all
// three nodes (one carries only the internal-ip annotation) and quoting
// their runtime and kubelet; the addon rule stays quiet with no workloads.
func TestAddonEndOfLifeRKE1(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, addonEndOfLifeCheckAt(at("2026-12-02")), checktest.Complete(checktest.Load(t, rke1Gap)))
	if !ok || len(fs) != 1 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseRKE1EOL || len(f.Objects) != 3 ||
		!strings.Contains(f.Title, "3 nodes were built by RKE (RKE1)") || !strings.Contains(f.Message, "2025-07-31") ||
		!strings.Contains(strings.Join(f.Evidence, "\n"), "ended 489 days before this audit") {
		t.Errorf("finding %+v", f)
	}
	if n := checktest.EvidenceTrue(t, fs, rke1Gap); n != 1 {
		t.Errorf("%d evidence items resolved, want 1", n)
	}
	// Within six months before the end: medium; earlier: nothing.
	s := checktest.Complete(checktest.Load(t, rke1Gap))
	if fs, _, _ := checktest.Run(t, addonEndOfLifeCheckAt(at("2025-03-01")), s); len(fs) != 1 || fs[0].Severity != finding.Medium {
		t.Errorf("before the end: %+v", fs)
	}
	checktest.Quiet(t, addonEndOfLifeCheckAt(at("2024-12-01")), s)
}

// Rancher v2 (RKE2) nodes and kubeadm nodes carry no RKE1 annotation.
func TestAddonEndOfLifeRKE1Clean(t *testing.T) {
	checktest.Quiet(t, addonEndOfLifeCheckAt(at("2026-12-02")), checktest.Complete(checktest.Load(t, "addon-end-of-life/rke1-clean.yaml")))
}

// A node whose kubelet RKE2 or k3s built is not RKE1's, even when it
// carries an RKE1 address annotation: the rule names only the others.
func TestAddonEndOfLifeRKE1SkipsRKE2AndK3sKubelets(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, rke1Gap))
	for i := range s.Nodes {
		s.Nodes[i].Status.NodeInfo.KubeletVersion = []string{"v1.32.5+rke2r1", "v1.32.5+k3s1"}[i%2]
	}
	checktest.Quiet(t, addonEndOfLifeCheckAt(at("2026-12-02")), s)
	s = checktest.Complete(checktest.Load(t, rke1Gap))
	s.Nodes[0].Status.NodeInfo.KubeletVersion = "v1.32.5+rke2r1"
	fs, _, _ := checktest.Run(t, addonEndOfLifeCheckAt(at("2026-12-02")), s)
	if len(fs) != 1 || len(fs[0].Objects) != 2 {
		t.Errorf("one RKE2-built node among three: %+v", fs)
	}
}
