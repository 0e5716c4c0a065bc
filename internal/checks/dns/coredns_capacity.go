package dns

import (
	_ "embed"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/coredns-capacity.yaml
var capacityYAML []byte

type memoryBasis struct {
	ID                 string   `json:"id"`
	Description        string   `json:"description"`
	PerPodsAndServices int64    `json:"perPodsAndServices"`
	BaseMB             int64    `json:"baseMB"`
	Sources            []string `json:"sources"`
}

type replicaBasis struct {
	ID                        string   `json:"id"`
	Description               string   `json:"description"`
	CoresPerReplica           int64    `json:"coresPerReplica"`
	NodesPerReplica           int64    `json:"nodesPerReplica"`
	Min                       int64    `json:"min"`
	PreventSinglePointFailure bool     `json:"preventSinglePointFailure"`
	Sources                   []string `json:"sources"`
}

type capacityFacts struct {
	Memory   []memoryBasis  `json:"memory"`
	Replicas []replicaBasis `json:"replicas"`
}

var loadCapacityFacts = check.Facts("CoreDNS capacity facts", capacityYAML, func(f *capacityFacts) error {
	if len(f.Memory) != 2 || len(f.Replicas) != 1 || f.Replicas[0].CoresPerReplica <= 0 || f.Replicas[0].NodesPerReplica <= 0 {
		return errors.New("CoreDNS capacity facts: want the default and autopath memory bases and one replica basis")
	}
	for _, m := range f.Memory {
		if m.PerPodsAndServices <= 0 || m.BaseMB <= 0 {
			return fmt.Errorf("CoreDNS capacity facts: memory basis %s needs positive numbers", m.ID)
		}
	}
	return nil
})

const (
	capacityID      = "coredns-capacity"
	ruleReplicas    = "replicas-vs-cluster-size"
	ruleMemory      = "memory-limit-vs-objects"
	ruleOOM         = "oom-killed"
	caseZalandoDNS  = "zalando-coredns-oom-2019"
	caseEKSResolver = "eks-vpc-resolver-throttling-coredns-colocated-2024"
	// RebelMouse: one CoreDNS pod lost in a node reroll overloaded the
	// rest, which no autoscaler had sized for the cluster.
	caseRebelMouse = "rebelmouse-coredns-pod-loss-during-eks-node-reroll-2025"
	megabyte       = 1000 * 1000 // the guide's MB; the smaller reading of "MB" reports less
)

// corednsCapacityCheck compares CoreDNS's replicas and memory limit with
// the cluster it serves.
func corednsCapacityCheck() check.Check {
	return check.Check{
		ID:       capacityID,
		Title:    "CoreDNS sized below the cluster it serves",
		Severity: finding.High,
		Description: "Cluster DNS is one Deployment every pod depends on. Its memory grows with the pods and Services " +
			"it watches, and a query burst OOM-kills every replica at once when the limit is tight, as in Zalando's " +
			"2019 outage (100Mi). Three rules, each on a sourced basis: memory-limit-vs-objects compares the CoreDNS " +
			"container's memory limit with the CoreDNS maintainers' estimate, (pods + services)/1000 + 54 MB, or " +
			"/250 + 56 MB when the Corefile (kube-system/coredns ConfigMap) enables autopath (high when the pods have " +
			"been OOM-killed too, else medium); replicas-vs-cluster-size, when no autoscaler for CoreDNS is visible " +
			"(cluster-proportional-autoscaler targeting it, or an HPA), compares spec.replicas with what the DNS " +
			"horizontal autoscaler add-on's default parameters would run: max(cores/256, nodes/16) over schedulable " +
			"nodes and their allocatable CPU, at least 2 on a " +
			"multi-node cluster (medium); oom-killed reports CoreDNS containers whose last termination was OOMKilled " +
			"(high). From partial input the counts are lower bounds: findings stand, silence proves nothing. Cannot " +
			"see: query rates, the VerticalPodAutoscaler (not read) and autoscaling a provider runs outside the cluster.",
		Reads: append(check.Needs(snapshot.Deployments), check.Optional(snapshot.Nodes), check.Optional(snapshot.Pods),
			check.Optional(snapshot.Services), check.Optional(snapshot.HorizontalPodAutoscalers), check.Optional(snapshot.ConfigMaps)),
		Rules: []check.Rule{
			{ID: ruleReplicas, Summary: "CoreDNS replicas below the DNS autoscaler's linear parameters with no autoscaler",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.Nodes, snapshot.HorizontalPodAutoscalers}},
			{ID: ruleMemory, Summary: "CoreDNS memory limit below the CoreDNS scaling guide's estimate for the pods and Services",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.Pods, snapshot.Services, snapshot.ConfigMaps}},
			{ID: ruleOOM, Summary: "CoreDNS containers last terminated by the OOM killer",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.Pods}},
		},
		Cases: check.Prevents(caseZalandoDNS, caseEKSResolver, caseRebelMouse),
		Run:   runCorednsCapacity,
	}
}

// corednsDeployment finds the cluster DNS Deployment: kube-system, pods
// labelled k8s-app=kube-dns, the label kubeadm and the managed platforms
// keep for CoreDNS.
func corednsDeployment(s *snapshot.Snapshot) *appsv1.Deployment {
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Namespace == "kube-system" && d.Spec.Template.Labels["k8s-app"] == "kube-dns" {
			return d
		}
	}
	return nil
}

func dnsContainer(d *appsv1.Deployment) *corev1.Container {
	cs := d.Spec.Template.Spec.Containers
	for i := range cs {
		if n := check.ImageName(cs[i].Image); n == "coredns" || strings.Contains(n, "dns") {
			return &cs[i]
		}
	}
	if len(cs) > 0 {
		return &cs[0]
	}
	return nil
}

func runCorednsCapacity(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadCapacityFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	d := corednsDeployment(s)
	if d == nil {
		if ctx.CompleteIn(snapshot.Deployments, "kube-system") {
			// Known absent: cluster DNS is provided some other way, nothing here to size.
			return nil, nil
		}
		return nil, check.NotEvaluated("no CoreDNS Deployment (k8s-app=kube-dns in kube-system) in the input")
	}
	var out []finding.Finding
	oom := oomKilledPods(ctx, d)
	if f, ok := memoryFinding(ctx, facts, d, len(oom) > 0); ok {
		out = append(out, f)
	}
	if f, ok := replicasFinding(ctx, facts.Replicas[0], d); ok {
		out = append(out, f)
	}
	if len(oom) > 0 {
		f := finding.Finding{
			Check:    capacityID,
			Severity: finding.High,
			Title:    fmt.Sprintf("CoreDNS pods were OOM-killed (%s)", check.Plural(len(oom), "pod", "pods")),
			Message: fmt.Sprintf("%s of Deployment kube-system/%s last terminated with reason OOMKilled: cluster DNS ran out of "+
				"memory. When load rises on every replica at once they die together and restart into the same load.", check.Plural(len(oom), "pod", "pods"), d.Name),
			Objects:     append([]finding.ObjectRef{check.Ref("apps/v1", "Deployment", d)}, podRefs(oom)...),
			Remediation: "Raise the CoreDNS memory limit well above its peak (see the scaling guide's estimate), add replicas or an autoscaler, and consider NodeLocal DNSCache to absorb bursts on each node.",
			Cases:       []string{caseZalandoDNS},
		}
		f.AddEvidence(oomEvidence(oom)...)
		out = append(out, f)
	}
	return out, nil
}

// oomKilledPods are the ready or not CoreDNS pods whose last termination
// was the OOM killer.
func oomKilledPods(ctx *check.Context, d *appsv1.Deployment) []*snapshot.Pod {
	var out []*snapshot.Pod
	for _, p := range ctx.Snapshot.Index().PodsInNamespace(d.Namespace) {
		if p.Labels["k8s-app"] != "kube-dns" {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if t := c.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func podRefs(ps []*snapshot.Pod) []finding.ObjectRef {
	var out []finding.ObjectRef
	for i, p := range ps {
		if i == check.MaxListedObjects {
			break
		}
		out = append(out, finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name})
	}
	return out
}

// oomEvidence quotes the OOM-killed containers' statuses, pods with the
// same values together.
func oomEvidence(ps []*snapshot.Pod) []finding.EvidenceItem {
	var g finding.Grouper
	for _, p := range ps {
		var fields []finding.Field
		for _, c := range p.Status.ContainerStatuses {
			if t := c.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
				status := "status.containerStatuses[name=" + c.Name + "]."
				fields = append(fields, finding.Value(status+"lastState.terminated.reason", t.Reason))
				// A restart count of 0 reads the same as a status
				// without the field: quoted only when there are restarts.
				if c.RestartCount > 0 {
					fields = append(fields, finding.Value(status+"restartCount", c.RestartCount))
				}
			}
		}
		g.Add(finding.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}, fields...)
	}
	return g.Items()
}

// autopath reports whether the Corefile enables the autopath plugin; ok
// is false when the ConfigMap is not in the snapshot.
func autopath(s *snapshot.Snapshot) (on, ok bool) {
	for i := range s.ConfigMaps {
		cm := &s.ConfigMaps[i]
		if cm.Namespace == "kube-system" && cm.Name == "coredns" {
			for _, line := range strings.Split(cm.Data["Corefile"], "\n") {
				if f := strings.Fields(line); len(f) > 0 && f[0] == "autopath" {
					return true, true
				}
			}
			return false, true
		}
	}
	return false, false
}

func memoryFinding(ctx *check.Context, facts *capacityFacts, d *appsv1.Deployment, oom bool) (finding.Finding, bool) {
	s := ctx.Snapshot
	c := dnsContainer(d)
	if c == nil {
		return finding.Finding{}, false
	}
	lim, has := c.Resources.Limits[corev1.ResourceMemory]
	if !has || lim.IsZero() {
		return finding.Finding{}, false // no limit: not OOM-killed by its own limit
	}
	basis := facts.Memory[0]
	ap, apKnown := autopath(s)
	if ap {
		basis = facts.Memory[1]
	}
	objects := int64(len(s.Pods) + len(s.Services))
	needMB := objects/basis.PerPodsAndServices + basis.BaseMB
	limitBytes := lim.Value()
	complete := ctx.Complete(snapshot.Pods) && ctx.Complete(snapshot.Services)
	if limitBytes >= needMB*megabyte {
		switch {
		case !complete:
			ctx.Incomplete(ruleMemory, "pods and Services are not all in the input: %d counted, the real estimate may exceed the %s limit", objects, lim.String())
		case !apKnown && facts.Memory[1].BaseMB+objects/facts.Memory[1].PerPodsAndServices > limitBytes/megabyte:
			ctx.Incomplete(ruleMemory, "the Corefile (ConfigMap kube-system/coredns) is not in the input: with autopath the estimate would exceed the limit")
		}
		return finding.Finding{}, false
	}
	sev := finding.Medium
	if oom {
		sev = finding.High
	}
	count := fmt.Sprintf("%d pods and %d Services", len(s.Pods), len(s.Services))
	if !complete {
		count = "at least " + count + " (the input is partial)"
	}
	f := finding.Finding{
		Check:    capacityID,
		Severity: sev,
		Title:    fmt.Sprintf("CoreDNS memory limit %s is below the scaling guide's %d MB for this cluster", lim.String(), needMB),
		Message: fmt.Sprintf("The %s container of Deployment kube-system/%s is limited to %s. The CoreDNS maintainers estimate %d MB "+
			"per instance for %s (%s), before any query burst: under load every replica can be OOM-killed at once and the "+
			"whole cluster loses DNS, as Zalando's did with a 100Mi limit.", c.Name, d.Name, lim.String(), needMB, count, basis.Description),
		Objects:     []finding.ObjectRef{check.Ref("apps/v1", "Deployment", d)},
		Remediation: "Raise the CoreDNS memory limit (and request) above the estimate with headroom for bursts, or let a VerticalPodAutoscaler manage it; NodeLocal DNSCache reduces the load a burst puts on CoreDNS.",
		Cases:       []string{caseZalandoDNS},
	}
	f.AddEvidence(finding.Quote(check.Ref("apps/v1", "Deployment", d),
		finding.Value(check.ContainerField("Deployment", "", c.Name, "resources.limits.memory"), lim.String())))
	corefile := "the Corefile is not in the input"
	if apKnown {
		corefile = "the Corefile (ConfigMap kube-system/coredns) has no autopath line"
		if ap {
			corefile = "the Corefile (ConfigMap kube-system/coredns) has an autopath line"
		}
	}
	f.Evidence = append(f.Evidence, fmt.Sprintf("limit %s = %d bytes", lim.String(), limitBytes),
		fmt.Sprintf("estimate: (%d pods + Services) / %d + %d = %d MB (%s); %s", objects, basis.PerPodsAndServices, basis.BaseMB, needMB, basis.Sources[0], corefile))
	return f, true
}

// dnsAutoscaler names what scales CoreDNS, or "".
func dnsAutoscaler(s *snapshot.Snapshot, d *appsv1.Deployment) string {
	target := "deployment/" + strings.ToLower(d.Name)
	for i := range s.Deployments {
		a := &s.Deployments[i]
		for _, c := range a.Spec.Template.Spec.Containers {
			if check.ImageName(c.Image) != "cluster-proportional-autoscaler" {
				continue
			}
			args := strings.ToLower(strings.Join(append(append([]string{}, c.Command...), c.Args...), " "))
			if strings.Contains(args, "--target="+target) || strings.Contains(args, "--target "+target) {
				return fmt.Sprintf("Deployment %s/%s (cluster-proportional-autoscaler)", a.Namespace, a.Name)
			}
		}
	}
	for i := range s.HorizontalPodAutoscalers {
		h := &s.HorizontalPodAutoscalers[i]
		if h.Namespace == d.Namespace && h.Spec.ScaleTargetRef.Kind == "Deployment" && h.Spec.ScaleTargetRef.Name == d.Name {
			return fmt.Sprintf("HorizontalPodAutoscaler %s/%s", h.Namespace, h.Name)
		}
	}
	return ""
}

func replicasFinding(ctx *check.Context, b replicaBasis, d *appsv1.Deployment) (finding.Finding, bool) {
	s := ctx.Snapshot
	if a := dnsAutoscaler(s, d); a != "" {
		return finding.Finding{}, false
	}
	// As the autoscaler counts: schedulable nodes and their allocatable
	// CPU, quoted grouped by value.
	var nodes, milli int64
	var cpu finding.Grouper
	for i := range s.Nodes {
		n := &s.Nodes[i]
		if n.Spec.Unschedulable {
			continue
		}
		nodes++
		field := finding.Absent("status.allocatable.cpu")
		if q, ok := n.Status.Allocatable[corev1.ResourceCPU]; ok {
			milli += q.MilliValue()
			field = finding.Value("status.allocatable.cpu", q.String())
		}
		cpu.Add(check.NodeRef(n.Name), field)
	}
	cores := milli / 1000
	want := max(ceilDiv(cores, b.CoresPerReplica), ceilDiv(nodes, b.NodesPerReplica), b.Min)
	if b.PreventSinglePointFailure && nodes > 1 {
		want = max(want, 2)
	}
	replicas := int64(1)
	if d.Spec.Replicas != nil {
		replicas = int64(*d.Spec.Replicas)
	}
	complete := ctx.Complete(snapshot.Nodes)
	if replicas >= want {
		if !complete || !ctx.Complete(snapshot.HorizontalPodAutoscalers) {
			ctx.Incomplete(ruleReplicas, "nodes or HorizontalPodAutoscalers are not all in the input: the cluster may be larger, or CoreDNS autoscaled")
		}
		return finding.Finding{}, false
	}
	if !ctx.Complete(snapshot.HorizontalPodAutoscalers) || !ctx.Complete(snapshot.Deployments) {
		// An autoscaler the input does not hold may scale CoreDNS.
		ctx.Incomplete(ruleReplicas, "HorizontalPodAutoscalers or Deployments are not all in the input: an autoscaler for CoreDNS may exist")
		return finding.Finding{}, false
	}
	size := fmt.Sprintf("%d schedulable nodes with %d allocatable cores", nodes, cores)
	if !complete {
		size = "at least " + size
	}
	f := finding.Finding{
		Check:    capacityID,
		Severity: finding.Medium,
		Title:    fmt.Sprintf("CoreDNS runs %d replicas for %d schedulable nodes, with no autoscaler", replicas, nodes),
		Message: fmt.Sprintf("Deployment kube-system/%s has spec.replicas %d and nothing scales it, while the cluster has %s. The DNS "+
			"horizontal autoscaler add-on with its default parameters would run %d: one replica per %d cores or per %d nodes, whichever "+
			"is more, and never a single replica on a multi-node cluster. Every pod's lookups land on these replicas.",
			d.Name, replicas, size, want, b.CoresPerReplica, b.NodesPerReplica),
		Objects: []finding.ObjectRef{check.Ref("apps/v1", "Deployment", d)},
		Remediation: "Deploy the DNS horizontal autoscaler (cluster-proportional-autoscaler targeting deployment/" + d.Name +
			") or enable your provider's CoreDNS autoscaling, and spread the replicas over nodes and zones.",
		Cases: []string{caseZalandoDNS, caseEKSResolver, caseRebelMouse},
	}
	// Without spec.replicas a Deployment runs one: the field is quoted
	// absent, not as a 1 the object does not hold.
	replicasField := finding.Absent("spec.replicas")
	if d.Spec.Replicas != nil {
		replicasField = finding.Value("spec.replicas", *d.Spec.Replicas)
	}
	f.AddEvidence(finding.Quote(check.Ref("apps/v1", "Deployment", d), replicasField))
	f.AddEvidence(cpu.Items()...)
	f.Evidence = append(f.Evidence,
		fmt.Sprintf("%s: max(ceil(%d/%d), ceil(%d/%d), %d) = %d", size, cores, b.CoresPerReplica, nodes, b.NodesPerReplica, b.Min, want),
		"no cluster-proportional-autoscaler targets it and no HorizontalPodAutoscaler scales it")
	return f, true
}

func ceilDiv(a, b int64) int64 {
	if a <= 0 {
		return 0
	}
	return (a + b - 1) / b
}
