package availability

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestDeschedulerEvictsCordonedGap(t *testing.T) {
	fs, _, ok := checktest.Run(t, deschedulerEvictsCordonedCheck(), checktest.Complete(checktest.Load(t, "descheduler-evicts-cordoned/gap.yaml")))
	if !ok || len(fs) != 1 {
		t.Fatalf("evaluated %v, findings %+v", ok, fs)
	}
	f := fs[0]
	if f.Severity != finding.High || f.Cases[0] != caseMoJDescheduler {
		t.Errorf("severity %v, cases %v", f.Severity, f.Cases)
	}
	for _, o := range []struct{ kind, ns, name string }{
		{"ConfigMap", "kube-system", "descheduler"}, {"Deployment", "kube-system", "descheduler"}, {"Node", "", "old-1"},
	} {
		if !checktest.HasObject(fs, o.kind, o.ns, o.name) {
			t.Errorf("%s %s not named: %+v", o.kind, o.name, f.Objects)
		}
	}
	if checktest.HasObject(fs, "Node", "", "new-1") {
		t.Error("names the schedulable node")
	}
	if !strings.Contains(strings.Join(f.Evidence, "\n"), "ignores") {
		t.Errorf("the ignored v1alpha1 strategies are not named: %v", f.Evidence)
	}
}

// Without the nodes (their read failed), the finding is medium, and the
// rule says the severity could not be judged: nodes are optional, but a
// finding they would raise is not presented as complete (issue 28).
func TestDeschedulerEvictsCordonedNodesFailed(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "descheduler-evicts-cordoned/gap.yaml"))
	s.Drop(snapshot.Nodes)
	s.SetCoverage(snapshot.Nodes, snapshot.StatusError, "the server is currently unable to handle the request")
	fs, ctx, ok := checktest.Run(t, deschedulerEvictsCordonedCheck(), s)
	note, noted := ctx.Notes()[ruleEvictsCordoned]
	if !ok || len(fs) != 1 || fs[0].Severity != finding.Medium || !noted || !strings.Contains(note.Reason, "nodes were not read completely") {
		t.Errorf("evaluated %v, findings %+v, notes %v", ok, fs, ctx.Notes())
	}
}

func TestDeschedulerEvictsCordonedClean(t *testing.T) {
	checktest.Quiet(t, deschedulerEvictsCordonedCheck(), checktest.Complete(checktest.Load(t, "descheduler-evicts-cordoned/ok.yaml")))
}

// A descheduler whose policy kubegap cannot read is not judged; from
// files, even a clean policy proves nothing about other ConfigMaps.
func TestDeschedulerEvictsCordonedPartial(t *testing.T) {
	for _, s := range []struct {
		name     string
		complete bool
	}{{"descheduler-evicts-cordoned/no-policy.yaml", true}, {"descheduler-evicts-cordoned/ok.yaml", false}} {
		snap := checktest.Load(t, s.name)
		if s.complete {
			snap = checktest.Complete(snap)
		}
		fs, ctx, _ := checktest.Run(t, deschedulerEvictsCordonedCheck(), snap)
		if _, noted := ctx.Notes()[ruleEvictsCordoned]; len(fs) != 0 || !noted {
			t.Errorf("%s: findings %+v, notes %v", s.name, fs, ctx.Notes())
		}
	}
}

func TestDeschedulerPolicyVersions(t *testing.T) {
	for _, tt := range []struct {
		policy string
		want   int
		fit    bool
	}{
		{"strategies: {RemovePodsViolatingNodeTaints: {enabled: true}}", 1, false},
		{"strategies: {RemovePodsViolatingNodeTaints: {enabled: true, params: {nodeFit: true}}}", 1, true},
		{"strategies: {RemovePodsViolatingNodeTaints: {enabled: false}}", 0, false},
		{"strategies: {RemovePodsViolatingNodeTaints: {enabled: true, params: {excludedTaints: [node.kubernetes.io/unschedulable]}}}", 0, false},
		{"profiles: [{name: p, pluginConfig: [{name: DefaultEvictor, args: {nodeFit: true}}], plugins: {deschedule: {enabled: [RemovePodsViolatingNodeTaints]}}}]", 1, true},
		{"profiles: [{name: p, pluginConfig: [{name: RemovePodsViolatingNodeTaints, args: {includedTaints: [dedicated]}}], plugins: {deschedule: {enabled: [RemovePodsViolatingNodeTaints]}}}]", 0, false},
		{"profiles: [{name: p, plugins: {balance: {enabled: [LowNodeUtilization]}}}]", 0, false},
		// Each version reads only its own part of the policy.
		{"apiVersion: descheduler/v1alpha2\nstrategies: {RemovePodsViolatingNodeTaints: {enabled: true}}", 0, false},
		{"apiVersion: descheduler/v1alpha1\nprofiles: [{name: p, plugins: {deschedule: {enabled: [RemovePodsViolatingNodeTaints]}}}]", 0, false},
	} {
		var p deschedulerPolicy
		if err := yaml.Unmarshal([]byte(tt.policy), &p); err != nil {
			t.Fatal(err)
		}
		got := p.evicting()
		if len(got) != tt.want || (len(got) == 1 && got[0].nodeFit != tt.fit) {
			t.Errorf("%s: %+v", tt.policy, got)
		}
	}
}

func TestIsKeyAsJoined(t *testing.T) {
	keys := []string{"kube-system/descheduler", "kube-system/descheduler-policy-configmap"}
	for _, c := range []struct{ ns, name string }{
		{"kube-system", "descheduler"}, {"kube-system", "descheduler-policy-configmap"}, {"kube-system", "descheduler-x"},
		{"kube-systemx", "descheduler"}, {"kube", "system/descheduler"}, {"kube-system/descheduler", ""}, {"", "kube-system/descheduler"},
		{"", ""}, {"default", "descheduler"},
	} {
		want := false
		for _, k := range keys {
			want = want || k == c.ns+"/"+c.name
		}
		if got := isKey(keys, c.ns, c.name); got != want {
			t.Errorf("isKey(%q, %q) = %v, want %v", c.ns, c.name, got, want)
		}
	}
}
