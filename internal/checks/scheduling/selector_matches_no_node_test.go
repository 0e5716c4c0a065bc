package scheduling

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check/checktest"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

func TestRegistered(t *testing.T) { checktest.Registered(t, Checks()) }

// byObject indexes findings by the kind/namespace/name of their first object.
func byObject(fs []finding.Finding) map[string]finding.Finding {
	out := map[string]finding.Finding{}
	for _, f := range fs {
		o := f.Objects[0]
		out[o.Kind+"/"+o.Namespace+"/"+o.Name+"|"+f.Title] = f
	}
	return out
}

func find(t *testing.T, fs []finding.Finding, ref, titlePart string) finding.Finding {
	t.Helper()
	for _, f := range fs {
		o := f.Objects[0]
		if o.Kind+"/"+o.Namespace+"/"+o.Name == ref && strings.Contains(f.Title, titlePart) {
			return f
		}
	}
	t.Fatalf("no finding on %s with %q in its title; have %v", ref, titlePart, keys(byObject(fs)))
	return finding.Finding{}
}

func keys(m map[string]finding.Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestSelectorGap(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "nodes.yaml", "gap.yaml"))
	fs, ctx, ok := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	if !ok {
		t.Fatal("not evaluated")
	}
	tests := []struct {
		ref, title string
		sev        finding.Severity
		cases      string
	}{
		{"Deployment/storage/csi-controller", "removed node-role.kubernetes.io/master", finding.High, caseDell},
		{"DaemonSet/kube-system/route-reflector", "removed node-role.kubernetes.io/master", finding.High, caseReddit},
		{"Deployment/ml/trainer", "requires nodes that do not exist", finding.High, caseReddit},
		{"DaemonSet/kube-system/cp-agent", "taints it does not tolerate", finding.High, caseDell},
		{"CronJob/system-upgrade/upgrade-agents", "excludes nodes by a removed label", finding.Medium, caseHetzner},
		// Optional-hardware DaemonSets often match no node on purpose.
		{"DaemonSet/kube-system/gpu-device-plugin", "requires nodes that do not exist", finding.Low, caseReddit},
	}
	for _, tt := range tests {
		f := find(t, fs, tt.ref, tt.title)
		if f.Severity != tt.sev {
			t.Errorf("%s: severity %v, want %v (%s)", tt.ref, f.Severity, tt.sev, f.Message)
		}
		if !strings.Contains(strings.Join(f.Cases, ","), tt.cases) {
			t.Errorf("%s: cases %v, want %s", tt.ref, f.Cases, tt.cases)
		}
	}
	if len(fs) != len(tests) {
		t.Errorf("%d findings, want %d: %v", len(fs), len(tests), keys(byObject(fs)))
	}
	for _, name := range []string{"web", "parked"} {
		for _, f := range fs {
			if f.Objects[0].Name == name {
				t.Errorf("finding on %s: %s", name, f.Title)
			}
		}
	}
	cp := find(t, fs, "DaemonSet/kube-system/cp-agent", "taints")
	if !checktest.HasObject([]finding.Finding{cp}, "Node", "", "cp-1") || !strings.Contains(cp.Message, "1.25") {
		t.Errorf("the taint finding should name cp-1 and the 1.25 removal: %+v", cp)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("complete input, but notes %v", n)
	}
}

func TestSelectorClean(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "nodes.yaml", "clean.yaml"))
	fs, ctx, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	for _, f := range fs {
		t.Errorf("unexpected finding %s: %s", f.Title, f.Message)
	}
	if n := ctx.Notes(); len(n) != 0 {
		t.Errorf("notes %v", n)
	}
}

// From files the Node list is an open world: a template that matches none
// of the nodes present is unknown, never "no node".
func TestSelectorOpenWorld(t *testing.T) {
	s := checktest.Load(t, "nodes.yaml", "gap.yaml")
	fs, ctx, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	for _, f := range fs {
		t.Errorf("files are not complete, but %s: %s", f.Title, f.Message)
	}
	n, ok := ctx.Notes()[ruleNoNode]
	if !ok || n.Skipped || !strings.Contains(n.Reason, "Deployment ml/trainer") {
		t.Errorf("want an incomplete note naming the stranded templates, got %+v", ctx.Notes())
	}
}

func TestSelectorKarpenter(t *testing.T) {
	s := checktest.Complete(checktest.Load(t, "nodes.yaml", "karpenter.yaml"))
	fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	nb := find(t, fs, "Deployment/ml/notebook", "do not exist")
	if nb.Severity != finding.Low || !strings.Contains(nb.Message, "NodePool ml") {
		t.Errorf("a NodePool can launch the node: want low naming it, got %v %q", nb.Severity, nb.Message)
	}
	oz := find(t, fs, "Deployment/ml/other-zone", "do not exist")
	if oz.Severity != finding.High {
		t.Errorf("the NodePool allows zones a and b only, so zone c is no node: got %v %q", oz.Severity, oz.Message)
	}
}

func TestRequirementMatching(t *testing.T) {
	n := &corev1.Node{}
	n.Name = "n1"
	n.Labels = map[string]string{"gen": "5", "pool": "a"}
	tests := []struct {
		r    requirement
		want bool
	}{
		{requirement{key: "gen", op: corev1.NodeSelectorOpGt, values: []string{"4"}}, true},
		{requirement{key: "gen", op: corev1.NodeSelectorOpLt, values: []string{"5"}}, false},
		{requirement{key: "gen", op: corev1.NodeSelectorOpGt, values: []string{"x"}}, false},
		{requirement{key: "missing", op: corev1.NodeSelectorOpNotIn, values: []string{"a"}}, true},
		{requirement{key: "missing", op: corev1.NodeSelectorOpDoesNotExist}, true},
		{requirement{key: "pool", op: corev1.NodeSelectorOpIn, values: []string{"b", "a"}}, true},
		{requirement{key: "metadata.name", op: corev1.NodeSelectorOpIn, values: []string{"n1"}, field: true}, true},
		{requirement{key: "metadata.name", op: corev1.NodeSelectorOpNotIn, values: []string{"n1"}, field: true}, false},
	}
	for _, tt := range tests {
		if got := tt.r.matches(n); got != tt.want {
			t.Errorf("%s on %v: %v, want %v", tt.r, n.Labels, got, tt.want)
		}
	}
	// An affinity with only empty terms matches no node.
	spec := &corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}}}}
	sel, ok := selectionOf(spec)
	ix := newNodeIndex([]corev1.Node{*n})
	r := &selectorRun{ix: ix, matched: map[string][]int{}}
	if !ok || !sel.noTerms || len(r.matching(sel)) != 0 {
		t.Errorf("empty terms: ok=%v noTerms=%v matched=%v", ok, sel.noTerms, r.matching(sel))
	}
	if _, ok := selectionOf(&corev1.PodSpec{}); ok {
		t.Error("a spec without selectors restricts nothing")
	}
}

func TestTolerates(t *testing.T) {
	taint := corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		ts   []corev1.Toleration
		want bool
	}{
		{[]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, true},
		{[]corev1.Toleration{{Key: "node-role.kubernetes.io/master", Operator: corev1.TolerationOpExists}}, false},
		{[]corev1.Toleration{{Key: taint.Key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}}, false},
		{[]corev1.Toleration{{Key: taint.Key}}, true}, // Equal with empty value
	}
	for i, tt := range tests {
		if got := tolerates(tt.ts, taint); got != tt.want {
			t.Errorf("%d: %v, want %v", i, got, tt.want)
		}
	}
}

// cluster-autoscaler may scale a node group up from zero, and its groups'
// labels are not in the API: a missing node is then medium, and the
// removed master label stays high (autoscalers add workers, not control
// planes).
func TestSelectorClusterAutoscaler(t *testing.T) {
	s := checktest.Load(t, "nodes.yaml", "gap.yaml")
	ca := appsv1.Deployment{}
	ca.Name, ca.Namespace = "cluster-autoscaler", "kube-system"
	ca.Spec.Template.Spec.Containers = []corev1.Container{{Name: "ca", Image: "registry.k8s.io/autoscaling/cluster-autoscaler:v1.35.0"}}
	s.Deployments = append(s.Deployments, ca)
	checktest.Complete(s)
	fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
	tr := find(t, fs, "Deployment/ml/trainer", "do not exist")
	if tr.Severity != finding.Medium || !strings.Contains(tr.Message, "cluster-autoscaler runs here") {
		t.Errorf("trainer with cluster-autoscaler: %v %q", tr.Severity, tr.Message)
	}
	if f := find(t, fs, "Deployment/storage/csi-controller", "removed"); f.Severity != finding.High {
		t.Errorf("master label with cluster-autoscaler: %v", f.Severity)
	}
}

// The scheduler's verdict on Pending pods proves a template matches no
// node when the Node list cannot: from files, with no Nodes at all, and
// with no ReplicaSets (the pods reach their Deployment by the
// pod-template-hash naming). Without Events, the verdicts written on the
// pods' conditions remain; the one known from an event only goes.
func TestSelectorSchedulerVerdict(t *testing.T) {
	all := []string{"Deployment/monitoring/metrics-collector", "Deployment/ml/trainer", "StatefulSet/payments/ledger"}
	inputs := []struct {
		name string
		load func() *snapshot.Snapshot
		want []string
	}{
		{"files", func() *snapshot.Snapshot { return checktest.Load(t, "nodes.yaml", "unschedulable.yaml") }, all},
		{"files, no Nodes", func() *snapshot.Snapshot {
			return checktest.Without(checktest.Load(t, "nodes.yaml", "unschedulable.yaml"), snapshot.Nodes)
		}, all},
		{"files, no Events", func() *snapshot.Snapshot {
			return checktest.Without(checktest.Load(t, "nodes.yaml", "unschedulable.yaml"), snapshot.Events)
		}, []string{"Deployment/monitoring/metrics-collector", "StatefulSet/payments/ledger"}},
	}
	for _, in := range inputs {
		t.Run(in.name, func(t *testing.T) {
			fs, ctx, ok := checktest.Run(t, selectorMatchesNoNodeCheck(), in.load())
			if !ok {
				t.Fatal("not evaluated, although the scheduler's verdicts are in the input")
			}
			got := map[string]finding.Finding{}
			for _, f := range fs {
				o := f.Objects[0]
				got[o.Kind+"/"+o.Namespace+"/"+o.Name] = f
			}
			if len(got) != len(in.want) || len(fs) != len(in.want) {
				t.Errorf("findings on %v, want %v", keys(byObject(fs)), in.want)
			}
			for _, ref := range in.want {
				f, ok := got[ref]
				if !ok {
					t.Errorf("no finding on %s", ref)
					continue
				}
				ev := strings.Join(f.Evidence, "\n")
				if !strings.Contains(ev, "0/7 nodes are available") {
					t.Errorf("%s: evidence should quote the scheduler: %s", ref, ev)
				}
			}
			if f := got["Deployment/monitoring/metrics-collector"]; f.Severity != finding.High ||
				!strings.Contains(strings.Join(f.Evidence, "\n"), "node-role.kubernetes.io/master") ||
				!strings.Contains(strings.Join(f.Evidence, "\n"), "ReplicaSet metrics-collector-6b7f9c8d5 is not in the input") {
				t.Errorf("metrics-collector: want high, naming the master selector and how its pod was tied: %+v", f)
			}
			if f := got["StatefulSet/payments/ledger"]; f.Severity != finding.Medium || !strings.Contains(f.Title, "matches and accepts") {
				t.Errorf("ledger: want the medium taint-or-selector verdict, got %v %q", f.Severity, f.Title)
			}
			// The silence of the rules still proves nothing.
			if n, ok := ctx.Notes()[ruleNoNode]; !ok || n.Skipped {
				t.Errorf("want no-matching-node partial, got %+v", ctx.Notes())
			}
		})
	}
}

// Pods waiting for room, and a pod placed since its FailedScheduling
// event, are no verdict on the template; complete input judges the
// templates from the nodes and reports the master selector once.
func TestSelectorSchedulerVerdictQuietAndComplete(t *testing.T) {
	for _, s := range []*snapshot.Snapshot{
		checktest.Load(t, "nodes.yaml", "unschedulable-clean.yaml"),
		checktest.Without(checktest.Load(t, "nodes.yaml", "unschedulable-clean.yaml"), snapshot.Nodes, snapshot.ReplicaSets),
	} {
		fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), s)
		for _, f := range fs {
			t.Errorf("unexpected finding %s: %v", f.Title, f.Evidence)
		}
	}
	checktest.Quiet(t, selectorMatchesNoNodeCheck(), checktest.Complete(checktest.Load(t, "nodes.yaml", "unschedulable-clean.yaml")))
	fs, _, _ := checktest.Run(t, selectorMatchesNoNodeCheck(), checktest.Complete(checktest.Load(t, "nodes.yaml", "unschedulable.yaml")))
	mc := find(t, fs, "Deployment/monitoring/metrics-collector", "removed node-role.kubernetes.io/master")
	if mc.Severity != finding.High {
		t.Errorf("complete input: %v", mc.Severity)
	}
	n := 0
	for _, f := range fs {
		if f.Objects[0].Name == "metrics-collector" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("metrics-collector reported %d times on complete input", n)
	}
}
