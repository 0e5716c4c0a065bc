package upgrade_test

import (
	"slices"
	"strings"
	"testing"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubegap/kubegap/internal/audit"
	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/checks"
	"github.com/kubegap/kubegap/internal/demo"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/report"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func demoAt(t *testing.T, target string) *report.Report {
	t.Helper()
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	v, _ := check.ParseKubeVersion(target)
	return audit.Run(s, checks.All(), audit.Options{Target: &v})
}

func seedFinding(r *report.Report) *finding.Finding {
	for i, f := range r.Findings {
		if f.Check == "upgrade-preflight" && f.Severity == finding.High && f.Preflight == finding.PreflightBefore && cites(f, "azure-cni-v2-glibc") {
			return &r.Findings[i]
		}
	}
	return nil
}

func hasNode(f *finding.Finding, name string) bool {
	return slices.Contains(f.Objects, finding.ObjectRef{APIVersion: "v1", Kind: "Node", Name: name})
}

func checkResult(r *report.Report, id string) *report.CheckResult {
	for i := range r.Checks {
		if r.Checks[i].ID == id {
			return &r.Checks[i]
		}
	}
	return nil
}

// TestMidUpgradeDemo is issue 24 item 1: the demo's control plane is at
// 1.35 and its fips2004 pool still on kubelet 1.34 and Ubuntu 20.04; the
// preflight to 1.35 judges that pool (the founding breakage) and skips
// only the control-plane path. Nodes already at the target are not judged.
func TestMidUpgradeDemo(t *testing.T) {
	r := demoAt(t, "1.35")
	f := seedFinding(r)
	if f == nil {
		t.Fatalf("no high preflight finding citing azure-cni-v2-glibc at 1.35 mid-upgrade: %+v", r.Findings)
	}
	if !hasNode(f, "aks-fips2004-10000000") || !hasNode(f, "aks-fips2004-10000001") || hasNode(f, "aks-system-20000000") {
		t.Errorf("seed finding names the wrong nodes: %v", f.Objects)
	}
	c := checkResult(r, "upgrade-preflight")
	if c == nil || c.Status == report.NotEvaluated {
		t.Fatalf("upgrade-preflight not evaluated: %+v", c)
	}
	for _, rr := range c.Rules {
		skipped := rr.Status == report.RuleSkipped
		if (rr.ID == "control-plane-path") != skipped {
			t.Errorf("rule %s: status %s (%s); only the control-plane path is skipped at the target", rr.ID, rr.Status, rr.Reason)
		}
	}
	var cgroup bool
	for _, g := range r.Findings {
		if g.Check != "upgrade-preflight" {
			continue
		}
		if cites(g, "k3s-135-kubelet-refuses-cgroup-v1-2026") {
			cgroup = true
		}
		for _, o := range g.Objects {
			if o.Kind == "Node" && strings.HasPrefix(o.Name, "aks-system-") && g.Severity >= finding.Medium {
				t.Errorf("a node already at 1.35 is judged: %s", g.Title)
			}
		}
	}
	if !cgroup {
		t.Error("the fips2004 pool's Ubuntu 20.04 boots cgroup v1, which its 1.35 kubelet refuses: no finding")
	}
}

// TestInferredVersionDump is issue 24 item 2's acceptance: a dump of a 1.34
// AKS cluster with no version document, Ubuntu 20.04 FIPS nodes and the
// static azure-cni installer, preflight to 1.35: the seed-000 finding,
// high, with the version inferred and its basis stated. The same cluster
// without the 20.04 pool (the managed AKS fixture, version document taken
// away) gets no such finding.
func TestInferredVersionDump(t *testing.T) {
	load := func(dir string) *snapshot.Snapshot {
		s, err := snapshot.LoadPaths([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	v := v135
	s := load("testdata/aks-134-fips-dump")
	if s.Source.ServerVersion != "" {
		t.Fatalf("the fixture must have no server version, has %q", s.Source.ServerVersion)
	}
	r := audit.Run(s, checks.All(), audit.Options{Target: &v})
	f := seedFinding(r)
	if f == nil {
		t.Fatalf("no high preflight finding citing azure-cni-v2-glibc: %+v", r.Findings)
	}
	if !hasNode(f, "aks-fips2004-10000000") || hasNode(f, "aks-systempool-31415926-vmss000000") {
		t.Errorf("seed finding names the wrong nodes: %v", f.Objects)
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "control plane inferred at 1.34") {
		t.Errorf("the finding does not say the version was inferred: %v", f.Evidence)
	}
	cv := r.CurrentVersion
	if cv == nil || !cv.Inferred || cv.Version != "1.34" || !strings.Contains(cv.Basis, "newest kubelet") ||
		!strings.Contains(cv.Basis, "--target-version 1.35 implies") {
		t.Errorf("current version = %+v", cv)
	}

	clean := load("../testdata/managed/aks")
	clean.Source.ServerVersion = ""
	r = audit.Run(clean, checks.All(), audit.Options{Target: &v})
	if f := seedFinding(r); f != nil {
		t.Errorf("no Ubuntu 20.04 node, yet: %s", f.Title)
	}
	if c := checkResult(r, "upgrade-preflight"); c == nil || c.Status == report.NotEvaluated {
		t.Errorf("upgrade-preflight not evaluated on the clean cluster: %+v", c)
	}
}

// TestDemoPlanAt136 is issue 24 item 3's acceptance: the 1.36 plan of the
// demo names the payments/checkout budget and the glibc breakage, each
// step with its finding ID and check.
func TestDemoPlanAt136(t *testing.T) {
	r := demoAt(t, "1.36")
	plan := report.Plan(r)
	var budget, glibc bool
	for _, st := range plan {
		if st.FindingID == "" || st.Check == "" {
			t.Errorf("step %d names no finding or check: %+v", st.Step, st)
		}
		for _, o := range st.Objects {
			if o.Kind == "PodDisruptionBudget" && o.Namespace == "payments" && o.Name == "checkout" {
				budget = true
			}
			if o.Kind == "DaemonSet" && o.Name == "azure-cns" && strings.Contains(st.Title, "glibc") {
				glibc = true
			}
		}
	}
	if !budget || !glibc {
		t.Errorf("plan without the budget (%v) or the glibc breakage (%v): %+v", budget, glibc, plan)
	}
}

// TestBudgetThatNeverAllowsEviction: a budget whose minAvailable equals
// its pods blocks every drain whatever the pods' health; one that leaves
// room does not.
func TestBudgetThatNeverAllowsEviction(t *testing.T) {
	pdb := func(name string, minAvailable int, healthy int32) policyv1.PodDisruptionBudget {
		ma := intstr.FromInt32(int32(minAvailable))
		return policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &ma, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}},
			Status: policyv1.PodDisruptionBudgetStatus{ExpectedPods: 2, CurrentHealthy: healthy, DesiredHealthy: int32(minAvailable),
				DisruptionsAllowed: max(0, healthy-int32(minAvailable))},
		}
	}
	s := &snapshot.Snapshot{}
	s.PodDisruptionBudgets = []policyv1.PodDisruptionBudget{pdb("strict", 2, 1), pdb("roomy", 1, 2)}
	s.Source.ServerVersion = "v1.34.2"
	pf, _ := checks.Lookup("upgrade-preflight")
	fs, err := pf.Run(&check.Context{Snapshot: s, Target: &v135})
	if err != nil {
		t.Fatal(err)
	}
	var strict, roomy bool
	for _, f := range fs {
		strict = strict || strings.Contains(f.Title, "shop/strict")
		roomy = roomy || strings.Contains(f.Title, "shop/roomy")
	}
	if !strict || roomy {
		t.Errorf("strict budget found %v (want true), roomy %v (want false): %+v", strict, roomy, fs)
	}
}
