package availability

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// The fixtures: four AWS nodes in two zones.
// gap.json: both CoreDNS replicas on node-a, metrics-server on two nodes
// of one zone, a fail-closed webhook's three backends on node-d, the only
// ingress endpoint behind a Local LoadBalancer on cordoned node-c, a
// two-replica API behind a Service without a budget. clean.json: the same
// cluster spread out and budgeted.

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

type want struct {
	kind, ns, name, title string
	sev                   finding.Severity
	cite                  string
}

func expect(t *testing.T, fs []finding.Finding, wants []want) {
	t.Helper()
	for _, w := range wants {
		found := false
		for _, f := range fs {
			o := f.Objects[0]
			if o.Kind == w.kind && o.Namespace == w.ns && o.Name == w.name && strings.Contains(f.Title, w.title) {
				found = true
				if f.Severity != w.sev {
					t.Errorf("%s/%s: severity %v, want %v", w.ns, w.name, f.Severity, w.sev)
				}
				if !strings.Contains(strings.Join(f.Cases, ","), w.cite) {
					t.Errorf("%s/%s: cases %v, want %s", w.ns, w.name, f.Cases, w.cite)
				}
			}
		}
		if !found {
			t.Errorf("no finding on %s %s/%s with %q", w.kind, w.ns, w.name, w.title)
		}
	}
	if len(fs) != len(wants) {
		for _, f := range fs {
			t.Logf("finding: %v %s", f.Severity, f.Title)
		}
		t.Errorf("%d findings, want %d", len(fs), len(wants))
	}
}

func run(t *testing.T, c check.Check, file string, complete bool) ([]finding.Finding, *check.Context) {
	t.Helper()
	s := checktest.Load(t, file)
	if complete {
		checktest.Complete(s)
	}
	fs, ctx, ok := checktest.Run(t, c, s)
	if !ok {
		t.Fatalf("%s not evaluated on %s", c.ID, file)
	}
	return fs, ctx
}

func TestColocationGap(t *testing.T) {
	fs, ctx := run(t, criticalAddonColocationCheck(), "gap.json", true)
	expect(t, fs, []want{
		{"Deployment", "kube-system", "coredns", "runs on node node-a", finding.High, caseEKSDNS},
		{"Deployment", "kube-system", "metrics-server", "runs in zone us-east-1a", finding.Medium, caseOrbos},
		{"Deployment", "policy", "policy", "runs on node node-d", finding.High, caseOrbos},
	})
	for _, f := range fs {
		if f.Objects[0].Name == "coredns" {
			ev := strings.Join(f.Evidence, "\n")
			if !strings.Contains(ev, "1024") || !strings.Contains(ev, "preferred (soft)") {
				t.Errorf("CoreDNS evidence should give the AWS limit and the soft anti-affinity: %s", ev)
			}
		}
		if f.Objects[0].Name == "policy" && !strings.Contains(f.Title, "ValidatingWebhookConfiguration policy") {
			t.Errorf("the webhook backend should name its webhook: %s", f.Title)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestColocationClean(t *testing.T) {
	checktest.Quiet(t, criticalAddonColocationCheck(), checktest.Complete(checktest.Load(t, "clean.json")))
}

// From files the pods are an open world, but a workload whose ready pods
// present reach spec.replicas is still judged: there are no others.
func TestColocationFiles(t *testing.T) {
	fs, _ := run(t, criticalAddonColocationCheck(), "gap.json", false)
	if len(fs) != 3 {
		t.Errorf("%d findings from files, want the 3 whose pods are all present", len(fs))
	}
}

func TestDisruptionGap(t *testing.T) {
	fs, ctx := run(t, disruptionExposureCheck(), "gap.json", true)
	expect(t, fs, []want{
		{"Service", "ingress", "ingress-nginx", "is on a cordoned node", finding.High, caseMybinder},
		{"Service", "ingress", "ingress-nginx", "on one node only", finding.Medium, caseDevopsHof},
		{"Deployment", "ingress", "ingress-nginx-controller", "1 replica and no PodDisruptionBudget", finding.Low, caseGKESurge},
		{"Deployment", "shop", "api", "2 replicas and no PodDisruptionBudget", finding.Medium, caseGKESurge},
	})
	// The DFDS rollover case is about single replicas: cited for the one
	// replica, not for the two.
	for _, f := range fs {
		one := strings.Contains(f.Title, "1 replica and no PodDisruptionBudget")
		two := strings.Contains(f.Title, "2 replicas and no PodDisruptionBudget")
		if got := slices.Contains(f.Cases, caseDFDSRollover); (one && !got) || (two && got) {
			t.Errorf("%s: cases %v", f.Title, f.Cases)
		}
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

func TestDisruptionClean(t *testing.T) {
	checktest.Quiet(t, disruptionExposureCheck(), checktest.Complete(checktest.Load(t, "clean.json")))
}

// Without complete PDBs a missing budget is unknown, never reported.
func TestDisruptionOpenWorld(t *testing.T) {
	fs, ctx := run(t, disruptionExposureCheck(), "gap.json", false)
	for _, f := range fs {
		if strings.Contains(f.Title, "PodDisruptionBudget") {
			t.Errorf("files: %s", f.Title)
		}
	}
	if n, ok := ctx.Notes()[ruleNoPDB]; !ok || !strings.Contains(n.Reason, "shop/api") {
		t.Errorf("want an incomplete note for the budgets, got %v", ctx.Notes())
	}
}

// A dual-stack Service lists each pod in an IPv4 and an IPv6 slice: the
// pod is one endpoint, not two.
func TestReadyEndpointNodesDualStack(t *testing.T) {
	s := checktest.Load(t, "gap.json")
	node := "node-c"
	ready := true
	for _, fam := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		s.EndpointSlices = append(s.EndpointSlices, discoveryv1.EndpointSlice{
			ObjectMeta:  metav1.ObjectMeta{Name: "ds-" + strings.ToLower(string(fam)), Namespace: "x", Labels: map[string]string{"kubernetes.io/service-name": "dual"}},
			AddressType: fam,
			Endpoints: []discoveryv1.Endpoint{{Addresses: []string{"a"}, NodeName: &node, Conditions: discoveryv1.EndpointConditions{Ready: &ready},
				TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "p1"}}},
		})
	}
	nodes, _ := readyEndpointNodes(s)
	if got := nodes["x/dual"][node]; got != 1 {
		t.Errorf("dual-stack pod counted %d times, want 1", got)
	}
	if got := nodes["ingress/ingress-nginx"]["node-c"]; got != 1 {
		t.Errorf("single-stack endpoint counted %d times, want 1", got)
	}
}

// A single-node cluster has nothing to spread over: no finding, and no
// unknown either.
func TestColocationSingleNode(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gap.json"))
	s.Nodes = s.Nodes[:1]
	checktest.Quiet(t, criticalAddonColocationCheck(), s)
}

func loadFiles(t *testing.T, file string) *snapshot.Snapshot {
	t.Helper()
	return checktest.Load(t, file)
}

func runOn(t *testing.T, c check.Check, s *snapshot.Snapshot) ([]finding.Finding, *check.Context) {
	t.Helper()
	fs, ctx, ok := checktest.Run(t, c, s)
	if !ok {
		t.Fatalf("%s not evaluated", c.ID)
	}
	return fs, ctx
}

// When the other nodes do not admit an add-on's pods (a taint they do not
// tolerate), no spreading is possible: the finding says so at low, and
// names the one node that admits them, instead of a high the user could
// only act on by adding nodes. Without the taint the same placement is the
// high of TestColocationGap.
func TestColocationOneEligibleNode(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gap.json"))
	for i := range s.Nodes {
		if s.Nodes[i].Name != "node-a" {
			s.Nodes[i].Spec.Taints = append(s.Nodes[i].Spec.Taints,
				corev1.Taint{Key: "dedicated", Value: "batch", Effect: corev1.TaintEffectNoSchedule})
		}
	}
	fs, _ := runOn(t, criticalAddonColocationCheck(), s)
	var dns *finding.Finding
	for i := range fs {
		if fs[i].Objects[0].Name == "coredns" {
			dns = &fs[i]
		}
		if fs[i].Severity >= finding.High {
			t.Errorf("high finding although only node-a admits the pods: %s", fs[i].Title)
		}
	}
	if dns == nil {
		t.Fatal("no finding on CoreDNS: a single point of failure is still worth saying")
	}
	if dns.Severity != finding.Low || !strings.Contains(dns.Title, "the only node its pods may run on") ||
		!strings.Contains(strings.Join(dns.Evidence, "\n"), "only node-a admits them") {
		t.Errorf("CoreDNS on its only admitting node: %v %q %v", dns.Severity, dns.Title, dns.Evidence)
	}
	// A tolerated taint admits the pods again: the high comes back.
	for i := range s.Deployments {
		if s.Deployments[i].Name == "coredns" {
			s.Deployments[i].Spec.Template.Spec.Tolerations = append(s.Deployments[i].Spec.Template.Spec.Tolerations,
				corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpExists})
		}
	}
	fs, _ = runOn(t, criticalAddonColocationCheck(), s)
	high := false
	for _, f := range fs {
		high = high || (f.Objects[0].Name == "coredns" && f.Severity == finding.High)
	}
	if !high {
		t.Error("CoreDNS tolerating the taint on the other nodes: want the high finding back")
	}
}

// TestColocationConditionTaints: the taints the node lifecycle sets from a
// node's conditions (a kube-apiserver's TaintNodesByCondition puts
// not-ready on every new node) say how a node is now, not where the
// template may run: they leave the other nodes eligible, and the
// colocated CoreDNS keeps its high finding.
func TestColocationConditionTaints(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "gap.json"))
	for i := range s.Nodes {
		s.Nodes[i].Spec.Taints = append(s.Nodes[i].Spec.Taints,
			corev1.Taint{Key: "node.kubernetes.io/not-ready", Effect: corev1.TaintEffectNoSchedule},
			corev1.Taint{Key: "node.kubernetes.io/disk-pressure", Effect: corev1.TaintEffectNoSchedule})
	}
	fs, _ := runOn(t, criticalAddonColocationCheck(), s)
	high := false
	for _, f := range fs {
		high = high || (f.Objects[0].Name == "coredns" && f.Severity == finding.High)
	}
	if !high {
		t.Errorf("condition taints made the other nodes ineligible: %d findings, no high on CoreDNS", len(fs))
	}
}
