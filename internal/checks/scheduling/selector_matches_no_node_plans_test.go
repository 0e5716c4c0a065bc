package scheduling

import (
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func planRuleFindings(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		if f.Rule == rulePlanSelector {
			out[f.Objects[0].Name] = f
		}
	}
	return out
}

// hetzner-k3s's Plans on nodes without the master label: the server Plan
// selects no node (high), the agent Plan excludes nothing and picks the
// control-plane node (medium, naming it).
func TestPlanSelectorGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "upgrade-plans/nodes.yaml", "upgrade-plans/gap.yaml"))
	fs, _, ok := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := planRuleFindings(fs)
	if f, ok := got["k3s-server"]; !ok || f.Severity != finding.High || f.Cases[0] != caseHetzner {
		t.Errorf("k3s-server: want a high finding citing %s, got %+v", caseHetzner, f)
	}
	agent, ok := got["k3s-agent"]
	if !ok || agent.Severity != finding.Medium || !checktest.HasObject([]finding.Finding{agent}, "Node", "", "k3s-master1") ||
		checktest.HasObject([]finding.Finding{agent}, "Node", "", "k3s-worker1") {
		t.Errorf("k3s-agent: want a medium finding naming k3s-master1 only, got %+v", agent)
	}
	if len(got) != 2 {
		t.Errorf("plan findings %v, want two", got)
	}
}

// Plans on the label the nodes carry are quiet with every rule judged.
func TestPlanSelectorClean(t *testing.T) {
	checktest.Quiet(t, selectorMatchesNoNodeCheck(), checktest.Complete(checktest.Load(t, "upgrade-plans/nodes.yaml", "upgrade-plans/clean.yaml")))
}

// Without every Node, or without the Plans, the rule is partial.
func TestPlanSelectorPartial(t *testing.T) {
	_, ctx, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), checktest.Load(t, "upgrade-plans/nodes.yaml", "upgrade-plans/gap.yaml"))
	if _, ok := ctx.Notes()[rulePlanSelector]; !ok {
		t.Errorf("no partial note from an incomplete Node list: %v", ctx.Notes())
	}
	s := checktest.Without(checktest.Complete(checktest.Load(t, "upgrade-plans/nodes.yaml")), snapshot.UpgradePlans)
	_, ctx, _ = checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	if _, ok := ctx.Notes()[rulePlanSelector]; !ok {
		t.Errorf("no partial note without Plans: %v", ctx.Notes())
	}
}

// A Plan left empty only by its exclusions is not reported: on a
// single-node cluster the agent Plan (control-plane DoesNotExist) selects
// no node, and that is what it is for.
func TestPlanSelectorExclusionsOnlyQuiet(t *testing.T) {
	checktest.Quiet(t, selectorMatchesNoNodeCheck(), checktest.Complete(checktest.Load(t,
		"upgrade-plans/single-node.yaml", "upgrade-plans/clean.yaml")))
}

// A Plan whose required label no node carries, when that label is not the
// removed master label, is medium: it upgrades nothing, but the label may
// be an opt-in not applied yet.
func TestPlanSelectorOptInLabelMedium(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "upgrade-plans/nodes.yaml", "upgrade-plans/opt-in.yaml"))
	fs, _, ok := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	got := planRuleFindings(fs)
	if f, ok := got["k3s-latest"]; !ok || f.Severity != finding.Medium || len(got) != 1 {
		t.Errorf("want one medium finding for k3s-latest, got %+v", got)
	}
}
