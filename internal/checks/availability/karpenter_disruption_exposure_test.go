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

const karpenterDetachGap = "karpenter-disruption-exposure/detach-stall-gap.yaml"

// detachStallFindings runs the check and keeps the findings of the detach
// stall rule (the fixture's 0.35.2 is also in the AMI drift defect's range).
func detachStallFindings(t *testing.T, s *snapshot.Snapshot) ([]finding.Finding, map[string]string) {
	t.Helper()
	fs, ctx, _ := checktest.Run(t, karpenterDisruptionExposureCheck(), s)
	var out []finding.Finding
	for _, f := range fs {
		if f.Cases[0] == caseKarpenterDetach {
			out = append(out, f)
		}
	}
	notes := map[string]string{}
	for rule, n := range ctx.Notes() {
		notes[rule] = n.Reason
	}
	return out, notes
}

// The reproduction's set-up (Karpenter 0.35.2, the default gp2 class, a
// ReadWriteOnce StatefulSet on a Karpenter node) is reported once, at
// medium, with evidence true to the fixture.
func TestKarpenterDetachStallGap(t *testing.T) {
	fs, notes := detachStallFindings(t, checktest.Complete(checktest.Load(t, karpenterDetachGap)))
	if len(fs) != 1 || len(notes) != 0 {
		t.Fatalf("findings %+v, notes %v", fs, notes)
	}
	f := fs[0]
	if f.Severity != finding.Medium || f.Cases[0] != caseKarpenterDetach || !checktest.HasObject(fs, "StatefulSet", "default", "inflate-arm64") ||
		!checktest.HasObject(fs, "Deployment", "karpenter", "karpenter") || !checktest.HasObject(fs, "StorageClass", "", "gp2") {
		t.Errorf("finding %+v", f)
	}
	for _, want := range []string{"0.35.2", "data (ReadWriteOnce, StorageClass gp2, provisioner kubernetes.io/aws-ebs)", "six-minute"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message lacks %q: %s", want, f.Message)
		}
	}
	// The stall follows only when a node goes before its volumes are
	// unmounted (karpenter pull request 1294), so the message says it may
	// happen, not that it happens on every disruption.
	if strings.Contains(f.Message, "every time") || !strings.Contains(f.Message, "may leave the moved pod") {
		t.Errorf("message overstates how often the stall follows: %s", f.Message)
	}
	if n := checktest.EvidenceTrue(t, fs, karpenterDetachGap); n < 4 {
		t.Errorf("%d evidence items resolved", n)
	}
}

// Each condition is needed: a 1.0.0 controller, a ReadWriteMany template,
// a class of another driver, pods off Karpenter nodes are all quiet; a
// class not in an incomplete read, or a node not in the input, leaves the
// rule partial.
func TestKarpenterDetachStallConditions(t *testing.T) {
	load := func() *snapshot.Snapshot { return checktest.Complete(checktest.Load(t, karpenterDetachGap)) }
	for name, edit := range map[string]func(s *snapshot.Snapshot){
		"controller 1.0.0": func(s *snapshot.Snapshot) {
			s.Deployments[0].Spec.Template.Spec.Containers[0].Image = "public.ecr.aws/karpenter/controller:1.0.0"
		},
		"ReadWriteMany": func(s *snapshot.Snapshot) {
			s.StatefulSets[0].Spec.VolumeClaimTemplates[0].Spec.AccessModes[0] = "ReadWriteMany"
		},
		"EFS class": func(s *snapshot.Snapshot) { s.StorageClasses[0].Provisioner = "efs.csi.aws.com" },
		"no default class": func(s *snapshot.Snapshot) {
			delete(s.StorageClasses[0].Annotations, "storageclass.kubernetes.io/is-default-class")
		},
		"no Karpenter node": func(s *snapshot.Snapshot) { delete(s.Nodes[0].Labels, karpenterPoolLabel) },
	} {
		s := load()
		edit(s)
		if fs, notes := detachStallFindings(t, s); len(fs) != 0 || notes[ruleKarpenterDetach] != "" {
			t.Errorf("%s: findings %+v, notes %v", name, fs, notes)
		}
	}
	s := load()
	ebs := "gp3"
	s.StatefulSets[0].Spec.VolumeClaimTemplates[0].Spec.StorageClassName = &ebs
	s.StorageClasses = append(s.StorageClasses, s.StorageClasses[0])
	s.StorageClasses[1].Name, s.StorageClasses[1].Provisioner, s.StorageClasses[1].Annotations = "gp3", "ebs.csi.aws.com", nil
	if fs, _ := detachStallFindings(t, s); len(fs) != 1 {
		t.Errorf("a named ebs.csi.aws.com class: findings %+v", fs)
	}
	s = checktest.Load(t, karpenterDetachGap) // not marked complete
	s.StorageClasses = nil
	if fs, notes := detachStallFindings(t, s); len(fs) != 0 || notes[ruleKarpenterDetach] == "" {
		t.Errorf("StorageClasses not read: findings %+v, notes %v", fs, notes)
	}
	s = load()
	s.Pods[0].Spec.NodeName = "ip-10-0-9-9.eu-west-3.compute.internal"
	if fs, notes := detachStallFindings(t, s); len(fs) != 0 || notes[ruleKarpenterDetach] == "" {
		t.Errorf("a node not in the input: findings %+v, notes %v", fs, notes)
	}
}
