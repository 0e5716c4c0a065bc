package autoscaling

import (
	"strings"
	"testing"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// Issue 8776's setup: an InPlaceOrRecreate VPA on a two-container
// Deployment beside a Pod LimitRange is flagged, citing the case; the VPA
// in Initial mode in shop is not.
func TestVPAEvictionLoopGap(t *testing.T) {
	const file = "vpa-eviction-loop/gap.yaml"
	s := checktest.Complete(checktest.Load(t, file))
	fs, _, ok := checktest.Run(t, vpaEvictionLoopCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	if len(fs) != 1 || fs[0].Rule != rulePodLimitRange || fs[0].Severity != finding.Medium || fs[0].Cases[0] != vpaEvictionCase {
		t.Fatalf("findings %v, want one medium %s citing %s", fs, rulePodLimitRange, vpaEvictionCase)
	}
	if !checktest.HasObject(fs, "VerticalPodAutoscaler", "default", "resource-consumer-vpa") ||
		!checktest.HasObject(fs, "LimitRange", "default", "pod-limits") {
		t.Errorf("objects %v: want the VPA and the LimitRange in default", fs[0].Objects)
	}
	if checktest.HasObject(fs, "VerticalPodAutoscaler", "shop", "web") {
		t.Error("a VPA in Initial mode is flagged")
	}
	if ev := strings.Join(fs[0].Evidence, "\n"); !strings.Contains(ev, "containers main, sidecar") {
		t.Errorf("evidence %q: want the managed containers named", ev)
	}
	checktest.EvidenceTrue(t, fs, file)
}

// Per-container limits, and a single-container target, are quiet.
func TestVPAEvictionLoopClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "vpa-eviction-loop/clean.yaml"))
	checktest.Quiet(t, vpaEvictionLoopCheck(), s)
}

// A container turned off in the VPA's policies leaves one managed
// container: quiet.
func TestVPAEvictionLoopContainerOff(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "vpa-eviction-loop/gap.yaml"))
	for _, v := range s.CustomObjects(snapshot.VerticalPodAutoscalers) {
		if v.GetName() == "resource-consumer-vpa" {
			v.Object["spec"].(map[string]any)["resourcePolicy"] = map[string]any{
				"containerPolicies": []any{map[string]any{"containerName": "sidecar", "mode": "Off"}}}
		}
	}
	checktest.Quiet(t, vpaEvictionLoopCheck(), s)
}

// Without LimitRanges read whole, the rule is not passed: it says the
// read was partial.
func TestVPAEvictionLoopLimitRangesUnknown(t *testing.T) {
	s := checktest.Load(t, "vpa-eviction-loop/clean.yaml")
	s.SetComplete(snapshot.VerticalPodAutoscalers, nil)
	s.SetComplete(snapshot.Deployments, nil)
	_, ctx, _ := checktest.Run(t, vpaEvictionLoopCheck(), s)
	if note, ok := ctx.Notes()[rulePodLimitRange]; !ok || !strings.Contains(note.Reason, "LimitRanges were not read whole") {
		t.Errorf("notes %v: want the rule marked incomplete", ctx.Notes())
	}
}
