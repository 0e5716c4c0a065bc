package availability

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestPDBBlocksDrainFires(t *testing.T) {
	c := pdbBlocksDrainCheck()
	fs, _, ok := checktest.Run(t, c, checktest.Load(t, "pdb-blocks-drain/gap.yaml"))
	if !ok {
		t.Fatal("not evaluated on a complete fixture")
	}
	if len(fs) != 3 {
		t.Fatalf("got %d findings, want 3 (one per budget): %+v", len(fs), fs)
	}
	tests := []struct {
		pdbNS, pdb   string
		sev          finding.Severity
		pods, nodes  []string
		evidence     []string
		messageParts []string
	}{
		{
			pdbNS: "azure-workload-identity-system", pdb: "azure-wi-webhook-controller-manager", sev: finding.High,
			pods: []string{"azure-wi-webhook-controller-manager-6b9c7d-x2k4p"}, nodes: []string{"aks-infra-0"},
			evidence:     []string{"spec.minAvailable=1", "status.disruptionsAllowed=0", "spec.unschedulable=true"},
			messageParts: []string{"minAvailable is 1", "1 pod", "already cordoned", "ReplicaSet azure-workload-identity-system/azure-wi-webhook-controller-manager-6b9c7d"},
		},
		{
			pdbNS: "knative-serving", pdb: "activator-pdb", sev: finding.High,
			pods: []string{"activator-7f9d8-abcde"}, nodes: []string{"aks-infra-1"},
			evidence:     []string{"spec.minAvailable=80%"},
			messageParts: []string{"minAvailable is 80%"},
		},
		{
			pdbNS: "istio-system", pdb: "istiod", sev: finding.High,
			pods: []string{"istiod-1", "istiod-2"}, nodes: []string{"aks-infra-0", "aks-infra-1"},
			evidence:     []string{"spec.maxUnavailable=0"},
			messageParts: []string{"allows no voluntary eviction", "2 pods"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.pdb, func(t *testing.T) {
			f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", tc.pdbNS, tc.pdb)
			if !ok {
				t.Fatalf("no finding names PodDisruptionBudget %s/%s", tc.pdbNS, tc.pdb)
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %v, want %v", f.Severity, tc.sev)
			}
			for _, p := range tc.pods {
				if !checktest.HasObject([]finding.Finding{f}, "Pod", tc.pdbNS, p) {
					t.Errorf("pod %s not named; objects %v", p, f.Objects)
				}
			}
			for _, n := range tc.nodes {
				if !checktest.HasObject([]finding.Finding{f}, "Node", "", n) {
					t.Errorf("node %s not named; objects %v", n, f.Objects)
				}
			}
			for _, e := range tc.evidence {
				if !checktest.EvidenceHas(f, e) {
					t.Errorf("no evidence line has %q: %q", e, f.Evidence)
				}
			}
			for _, m := range tc.messageParts {
				if !strings.Contains(f.Message, m) {
					t.Errorf("message lacks %q: %s", m, f.Message)
				}
			}
			if !slices.Contains(f.Cases, "azure-workload-identity-pdb-blocks-aks-upgrade") {
				t.Errorf("cases %v lack the founding PDB case", f.Cases)
			}
			if f.Remediation == "" {
				t.Error("no remediation")
			}
		})
	}
}

func TestPDBBlocksDrainSilentOnHealthyBudgets(t *testing.T) {
	fs, _, ok := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/healthy.yaml"))
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 0 {
		t.Errorf("got findings on budgets that allow evictions: %+v", fs)
	}
}

// Finished and terminating pods count for no budget: a budget whose other
// pods leave room for an eviction is not exhausted by them, whether they
// come first, between or last among the pods its selector matches.
func TestPDBBlocksDrainIgnoresFinishedPods(t *testing.T) {
	fs, _, ok := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Complete(checktest.Load(t, "pdb-blocks-drain/finished-pods.yaml")))
	if !ok {
		t.Fatal("not evaluated on a complete fixture")
	}
	if len(fs) != 0 {
		t.Errorf("got findings on a budget that allows an eviction of its running pods: %+v", fs)
	}
}

func TestPDBBlocksDrainUnreadyPods(t *testing.T) {
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/unready.yaml"))
	f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", "shop", "api")
	if !ok || len(fs) != 1 {
		t.Fatalf("want one finding about shop/api, got %+v", fs)
	}
	if f.Severity != finding.Medium {
		t.Errorf("severity %v, want medium for a budget exhausted by not-Ready pods", f.Severity)
	}
	for _, p := range []string{"api-2", "api-3"} {
		if !checktest.EvidenceHas(f, "Pod shop/"+p, "Ready condition not True") {
			t.Errorf("evidence does not show %s not Ready: %q", p, f.Evidence)
		}
	}
	if !checktest.EvidenceHas(f, "unhealthyPodEvictionPolicy") {
		t.Errorf("evidence does not mention the eviction policy: %q", f.Evidence)
	}
	if !strings.Contains(f.Remediation, "AlwaysAllow") {
		t.Errorf("remediation does not suggest AlwaysAllow: %s", f.Remediation)
	}
}

func TestPDBBlocksDrainOverlap(t *testing.T) {
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/overlap.yaml"))
	if len(fs) != 1 {
		t.Fatalf("want one finding for the overlapping pair, got %d: %+v", len(fs), fs)
	}
	f := fs[0]
	if f.Severity != finding.High {
		t.Errorf("severity %v, want high", f.Severity)
	}
	for _, want := range []struct{ kind, ns, name string }{
		{"PodDisruptionBudget", "cache", "redis"},
		{"PodDisruptionBudget", "cache", "redis-legacy"},
		{"Pod", "cache", "redis-0"},
		{"Pod", "cache", "redis-1"},
		{"Node", "", "node-a"},
		{"Node", "", "node-b"},
	} {
		if !checktest.HasObject(fs, want.kind, want.ns, want.name) {
			t.Errorf("%s %s/%s not named", want.kind, want.ns, want.name)
		}
	}
	if checktest.HasObject(fs, "Pod", "other", "redis-0") {
		t.Error("a pod of another namespace is counted as covered")
	}
}

func TestPDBBlocksDrainSelectors(t *testing.T) {
	s := checktest.Load(t, "pdb-blocks-drain/selectors.yaml", "pdb-blocks-drain/nomatch.yaml")
	// From files, the relabelled frontend's old pods may just not be in
	// the input: no "selects no pods" (issue 12, false finding 15).
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), s)
	if f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", "shop", "old-frontend"); ok {
		t.Errorf("a budget is said to select nothing although Pods are not complete: %s", f.Title)
	}
	// Read as a live cluster would be: every Pod is there.
	s.SetComplete(snapshot.Pods, nil)
	fs, _, _ = checktest.Run(t, pdbBlocksDrainCheck(), s)
	tests := []struct {
		ns, name string
		sev      finding.Severity
		pinned   string
	}{
		{"batch", "everything", finding.High, "worker-1"}, // {} selects the whole namespace
		{"batch", "nothing", finding.Low, ""},             // null selects no pod
		{"shop", "old-frontend", finding.Low, ""},         // selector outlived its workload
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", tc.ns, tc.name)
			if !ok {
				t.Fatalf("no finding about %s/%s", tc.ns, tc.name)
			}
			if f.Severity != tc.sev {
				t.Errorf("severity %v, want %v", f.Severity, tc.sev)
			}
			if tc.pinned != "" && !checktest.HasObject([]finding.Finding{f}, "Pod", tc.ns, tc.pinned) {
				t.Errorf("pod %s not named", tc.pinned)
			}
			if tc.pinned == "" && !checktest.EvidenceHas(f, "matches 0 pods") && !checktest.EvidenceHas(f, "selects no pod by definition") {
				t.Errorf("evidence does not show the empty match: %q", f.Evidence)
			}
		})
	}
	if len(fs) != 3 {
		t.Errorf("got %d findings, want 3", len(fs))
	}
}

// TestPDBBlocksDrainWithoutPods: a budget with maxUnavailable 0 never
// allows an eviction, which the budget alone proves; what it pins is
// unknown without pods, so medium, and the rules that need pods are partial.
func TestPDBBlocksDrainWithoutPods(t *testing.T) {
	fs, _, ok := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/budgets-only.yaml"))
	if !ok {
		t.Fatal("not evaluated: the zero budget is hidden because pods are missing")
	}
	f, found := checktest.FindingAbout(fs, "PodDisruptionBudget", "istio-system", "istiod")
	if !found || len(fs) != 1 {
		t.Fatalf("want one finding about istio-system/istiod, got %+v", fs)
	}
	if f.Severity != finding.Medium || !strings.Contains(f.Title, "never allows an eviction") || !checktest.EvidenceHas(f, "spec.maxUnavailable=0") {
		t.Errorf("%v %q %q", f.Severity, f.Title, f.Evidence)
	}
	if !strings.Contains(f.Message, "not in the input") {
		t.Errorf("message does not say the pods are unknown: %s", f.Message)
	}
}

// TestPDBBlocksDrainSkipsDaemonSetAndMirrorPods: issue 12, false finding 2.
func TestPDBBlocksDrainSkipsDaemonSetAndMirrorPods(t *testing.T) {
	s := checktest.Load(t, "pdb-blocks-drain/drain-skips.yaml")
	for _, complete := range []bool{false, true} {
		if complete {
			s.SetComplete(snapshot.Pods, nil)
		}
		fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), s)
		for _, f := range fs {
			t.Errorf("complete=%v: finding on pods drain never evicts: %v %s: %s", complete, f.Severity, f.Title, f.Message)
		}
	}
}

// TestPDBBlocksDrainWorkloadsNotPods: issue 12, false finding 15. Pods of
// other workloads in the input, the budgets' own workloads and status
// beside them: no budget "selects no pods", complete Pods or not.
func TestPDBBlocksDrainWorkloadsNotPods(t *testing.T) {
	s := checktest.Load(t, "pdb-blocks-drain/workloads.yaml")
	for _, complete := range []bool{false, true} {
		if complete {
			s.SetComplete(snapshot.Pods, nil)
		}
		fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), s)
		for _, f := range fs {
			t.Errorf("complete=%v: %v %s: %q", complete, f.Severity, f.Title, f.Evidence)
		}
	}
}

// TestPDBBlocksDrainZeroBudgetCountsWorkloads: without its pods, a zero
// budget over a 2-replica Deployment is high, with the count's source.
func TestPDBBlocksDrainZeroBudgetCountsWorkloads(t *testing.T) {
	s := checktest.Load(t, "pdb-blocks-drain/budgets-only.yaml", "pdb-blocks-drain/zero-workload.yaml")
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), s)
	f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", "istio-system", "istiod")
	if !ok || len(fs) != 1 {
		t.Fatalf("want one finding about istiod, got %+v", fs)
	}
	if f.Severity != finding.High || !strings.Contains(f.Message, "covers 2 pods") {
		t.Errorf("%v %s", f.Severity, f.Message)
	}
	if !checktest.EvidenceHas(f, "Deployment/istio-system/istiod: spec.replicas=2") {
		t.Errorf("evidence %q", f.Evidence)
	}
}

// TestPDBBlocksDrainV1beta1EmptySelector: issue 12, false finding 14.
func TestPDBBlocksDrainV1beta1EmptySelector(t *testing.T) {
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/v1beta1.yaml"))
	f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", "batch", "legacy")
	if !ok || len(fs) != 1 {
		t.Fatalf("want one finding about batch/legacy, got %+v", fs)
	}
	if f.Severity != finding.Low || !strings.Contains(f.Title, "selects no pods") {
		t.Errorf("a v1beta1 {} selector read as selecting every pod: %v %s", f.Severity, f.Title)
	}
	if checktest.HasObject(fs, "Pod", "batch", "worker-1") {
		t.Error("worker-1 is said to be pinned by a budget that selects no pod")
	}
	if !checktest.EvidenceHas(f, "policy/v1beta1: selects no pod") {
		t.Errorf("evidence %q", f.Evidence)
	}
}

func TestPDBBlocksDrainPendingReplica(t *testing.T) {
	fs, _, _ := checktest.Run(t, pdbBlocksDrainCheck(), checktest.Load(t, "pdb-blocks-drain/pending.yaml"))
	f, ok := checktest.FindingAbout(fs, "PodDisruptionBudget", "shop", "checkout")
	if !ok || len(fs) != 1 {
		t.Fatalf("want one finding about shop/checkout, got %+v", fs)
	}
	// Exhausted, and a node running its healthy pod is cordoned: the drain
	// is waiting on it now.
	if f.Severity != finding.High {
		t.Errorf("severity %v, want high", f.Severity)
	}
	if !checktest.EvidenceHas(f, "Pod/shop/checkout-2: status.phase=Pending") || !checktest.EvidenceHas(f, "Node/aks-np-old: spec.unschedulable=true") {
		t.Errorf("evidence %q", f.Evidence)
	}
	if !slices.Contains(f.Cases, "azure-cni-v2-glibc") {
		t.Errorf("cases %v do not cite the sandbox-failure chain", f.Cases)
	}
	if strings.Contains(f.Message, "cannot be evicted either") {
		t.Errorf("a Pending pod is said to be protected by the budget: %s", f.Message)
	}
}
