package availability

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const karpenterGap = "karpenter-disruption-exposure/gap.yaml"

func TestKarpenterConsolidationGap(t *testing.T) {
	fs, ctx, ok := checktest.Run(t, karpenterDisruptionExposureCheck(), checktest.Complete(checktest.Load(t, karpenterGap)))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseKarpenterNoPDB {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	if !checktest.HasObject(fs, "Deployment", "prod", "api-gateway") || !checktest.HasObject(fs, "NodePool", "", "general-purpose") ||
		!checktest.HasObject(fs, "Service", "prod", "api-gateway") {
		t.Errorf("objects %+v", f.Objects)
	}
	for _, want := range []string{`"100%"`, "consolidateAfter 30s, under 1m", "its running pods (2)"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	if len(ctx.Notes()) != 0 {
		t.Errorf("notes %v", ctx.Notes())
	}
	if n := checktest.EvidenceTrue(t, fs, karpenterGap); n < 2 {
		t.Errorf("%d evidence items resolved", n)
	}
}

func TestKarpenterConsolidationClean(t *testing.T) {
	checktest.Quiet(t, karpenterDisruptionExposureCheck(), checktest.Complete(checktest.Load(t, "karpenter-disruption-exposure/clean.yaml")))
}

// Budgets decide: one always-active budget for Underutilized below 100 %
// bounds the pass; a scheduled one or one for Drifted only does not; no
// budgets at all is Karpenter's default 10 %.
func TestKarpenterPoolBudgets(t *testing.T) {
	facts, err := loadKarpenterFacts()
	if err != nil {
		t.Fatal(err)
	}
	pool := func(disruption map[string]any) karpenterPool {
		s := checktest.Load(t, karpenterGap)
		u := s.CustomObjects(snapshot.KarpenterNodePools)[0].DeepCopy()
		if disruption == nil {
			delete(u.Object["spec"].(map[string]any), "disruption")
		} else {
			u.Object["spec"].(map[string]any)["disruption"] = disruption
		}
		return readKarpenterPool(u, facts)
	}
	b := func(nodes string, extra ...string) map[string]any {
		m := map[string]any{"nodes": nodes}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i] == "reasons" {
				m["reasons"] = []any{extra[i+1]}
			} else {
				m[extra[i]] = extra[i+1]
			}
		}
		return m
	}
	for name, tc := range map[string]struct {
		disruption map[string]any
		exposed    bool
	}{
		"no disruption block: defaults, 10%":     {nil, false},
		"100% for all reasons":                   {map[string]any{"budgets": []any{b("100%")}}, true},
		"100% and 5 nodes":                       {map[string]any{"budgets": []any{b("100%"), b("5")}}, false},
		"100% with a 0 window for Underutilized": {map[string]any{"budgets": []any{b("100%"), b("0", "schedule", "@daily", "duration", "10m", "reasons", "Underutilized")}}, true},
		"only Drifted is bounded":                {map[string]any{"budgets": []any{b("10%", "reasons", "Drifted")}}, true},
		"Underutilized bounded by reason":        {map[string]any{"budgets": []any{b("100%", "reasons", "Empty"), b("20%", "reasons", "Underutilized")}}, false},
		"WhenEmpty":                              {map[string]any{"consolidationPolicy": "WhenEmpty", "budgets": []any{b("100%")}}, false},
		"consolidateAfter Never":                 {map[string]any{"consolidateAfter": "Never", "budgets": []any{b("100%")}}, false},
		"budgets unset: default 10%":             {map[string]any{"consolidateAfter": "30s"}, false},
	} {
		if got := pool(tc.disruption).allowAll != ""; got != tc.exposed {
			t.Errorf("%s: exposed %v, want %v", name, got, tc.exposed)
		}
	}
}

// A backend with one pod off the pool, or pods on nodes not in the input,
// is not reported; the second leaves the rule partial.
func TestKarpenterConsolidationPodsElsewhere(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, karpenterGap))
	for i := range s.Nodes {
		if s.Nodes[i].Name == "ip-10-0-2-12.ec2.internal" {
			delete(s.Nodes[i].Labels, karpenterPoolLabel)
		}
	}
	checktest.Quiet(t, karpenterDisruptionExposureCheck(), s)

	s = checktest.Complete(checktest.Load(t, karpenterGap))
	for i := range s.Pods {
		if s.Pods[i].Name == "api-gateway-7d9f-b" {
			s.Pods[i].Spec.NodeName = "ip-10-0-3-13.ec2.internal" // not in the input
		}
	}
	fs, ctx, _ := checktest.Run(t, karpenterDisruptionExposureCheck(), s)
	if _, noted := ctx.Notes()[ruleKarpenterConsol]; len(fs) != 0 || !noted {
		t.Errorf("findings %+v, notes %v", fs, ctx.Notes())
	}
}

func TestKarpenterAMIDriftVersion(t *testing.T) {
	const file = "karpenter-disruption-exposure/ami-drift-gap.yaml"
	fs, ctx, ok := checktest.Run(t, karpenterDisruptionExposureCheck(), checktest.Complete(checktest.Load(t, file)))
	if !ok || len(fs) != 1 || len(ctx.Notes()) != 0 {
		t.Fatalf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
	if f := fs[0]; f.Severity != finding.High || f.Cases[0] != caseKarpenterAMIBug || !checktest.HasObject(fs, "Deployment", "kube-system", "karpenter") ||
		!strings.Contains(f.Message, "0.36.2") {
		t.Errorf("finding %+v", f)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// Every line of the defect table: the release below the patch is
// reported, the patch and a later line are not, a digest-only image is
// not judged.
func TestKarpenterAMIDriftTable(t *testing.T) {
	for _, tc := range []struct {
		image string
		hit   bool
	}{
		{"public.ecr.aws/karpenter/controller:v0.31.4", true}, {"public.ecr.aws/karpenter/controller:v0.31.5", false},
		{"public.ecr.aws/karpenter/controller:v0.32.9@sha256:0000000000000000000000000000000000000000000000000000000000000000", true},
		{"public.ecr.aws/karpenter/controller:0.33.0", true}, {"public.ecr.aws/karpenter/controller:0.34.6", false},
		{"public.ecr.aws/karpenter/controller:0.35.4", true}, {"public.ecr.aws/karpenter/controller:0.37.0", false},
		{"public.ecr.aws/karpenter/controller:v0.30.0", false}, {"registry.example.com/karpenter/controller:0.36.1", false},
	} {
		s := checktest.Complete(checktest.Load(t, "karpenter-disruption-exposure/ami-drift-gap.yaml"))
		s.Deployments = s.Deployments[:1]
		s.Deployments[0].Spec.Template.Spec.Containers[0].Image = tc.image
		fs, _, _ := checktest.Run(t, karpenterDisruptionExposureCheck(), s)
		if got := len(fs) == 1; got != tc.hit {
			t.Errorf("%s: reported %v, want %v", tc.image, got, tc.hit)
		}
	}
	s := checktest.Complete(checktest.Load(t, "karpenter-disruption-exposure/ami-drift-gap.yaml"))
	s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "public.ecr.aws/karpenter/controller@sha256:0000000000000000000000000000000000000000000000000000000000000000"
	_, ctx, _ := checktest.Run(t, karpenterDisruptionExposureCheck(), s)
	if _, noted := ctx.Notes()[ruleKarpenterAMIBug]; !noted {
		t.Errorf("a digest-only controller image left no note: %v", ctx.Notes())
	}
}
