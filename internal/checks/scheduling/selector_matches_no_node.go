package scheduling

import (
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/selector-matches-no-node.yaml
var selectorFactsYAML []byte

// renamedKey is a node label or taint Kubernetes renamed.
type renamedKey struct {
	Old          string   `json:"old"`
	New          string   `json:"new"`
	Kind         string   `json:"kind"`
	DeprecatedIn string   `json:"deprecatedIn"`
	RemovedIn    string   `json:"removedIn"`
	Note         string   `json:"note"`
	Sources      []string `json:"sources"`
}

type selectorFacts struct {
	Renamed []renamedKey `json:"renamed"`
}

var loadSelectorFacts = check.Facts("selector facts", selectorFactsYAML, func(f *selectorFacts) error {
	for _, r := range f.Renamed {
		if r.Old == "" || r.New == "" || (r.Kind != "label" && r.Kind != "taint") || r.RemovedIn == "" || len(r.Sources) == 0 {
			return errors.New("selector facts: every renamed key needs old, new, kind label|taint, removedIn and sources")
		}
	}
	return nil
})

// renamed returns the fact about an old key of a kind, if any.
func (f *selectorFacts) renamed(kind, old string) (renamedKey, bool) {
	for _, r := range f.Renamed {
		if r.Kind == kind && r.Old == old {
			return r, true
		}
	}
	return renamedKey{}, false
}

// Rule IDs.
const (
	ruleNoNode     = "no-matching-node"
	ruleLegacy     = "legacy-master-selector"
	ruleTaint      = "taint-not-tolerated"
	ruleNoopExcl   = "no-op-exclusion"
	caseReddit     = "reddit-pi-day-calico-master-label-2023"
	caseDell       = "dell-csm-master-nodeselector-k8s124-2022"
	caseHetzner    = "hetzner-k3s-upgrade-plan-legacy-master-selector-2026"
	labelMaster    = "node-role.kubernetes.io/master"
	labelCtrlPlane = "node-role.kubernetes.io/control-plane"
)

// templateNeeds are the workloads whose templates the rules judge.
var templateNeeds = []snapshot.Resource{snapshot.Nodes, snapshot.Deployments, snapshot.StatefulSets,
	snapshot.DaemonSets, snapshot.Jobs, snapshot.CronJobs}

// selectorMatchesNoNodeCheck finds workload templates whose node selection
// no node can meet.
func selectorMatchesNoNodeCheck() check.Check {
	return check.Check{
		ID:       "selector-matches-no-node",
		Title:    "Workloads whose node selectors or tolerations match no node",
		Severity: finding.High,
		Description: "Evaluates the nodeSelector and required node affinity of every Deployment, StatefulSet, " +
			"DaemonSet, Job and CronJob template against the labels of every Node, the way the scheduler does. " +
			"A template no node can host leaves its pods Pending (a DaemonSet runs nowhere), silently: nothing " +
			"fails until someone needs those pods. The common cause is a renamed label: kubeadm stopped applying " +
			"node-role.kubernetes.io/master in 1.24 and its taint in 1.25, which took Reddit down when Calico's " +
			"route reflectors selected on the old label. High for selectors on the old master label while " +
			"control-plane nodes carry only the new one, and for templates whose only matching nodes carry a " +
			"NoSchedule/NoExecute taint they do not tolerate (the master toleration on a control-plane taint); " +
			"high for other Deployments, StatefulSets, Jobs and CronJobs no node matches, lowered to medium when " +
			"cluster-autoscaler or a managed node pool could create a matching node the API does not show, and to " +
			"low when a Karpenter NodePool can launch one; low for DaemonSets (optional-hardware agents such as " +
			"GPU plugins often match no node on purpose); medium for NotIn/DoesNotExist exclusions on the old master " +
			"label where nodes carry only the new one: they exclude nothing, so pods meant to avoid the control plane " +
			"may land there (exclusions of other absent keys, such as Fargate or virtual-kubelet nodes, are meant for " +
			"nodes that may join later and are not reported). Node condition taints (node.kubernetes.io/*) are transient and ignored. Without " +
			"a complete Node list no template is said to match nothing from the nodes present; the scheduler's own verdict is used " +
			"instead: Pending pods whose PodScheduled=False/Unschedulable condition or latest FailedScheduling event says every node " +
			"failed their node affinity/selector (high, medium without the template or when a node could be created) or failed it or " +
			"carried an untolerated taint the message names (medium; condition taints such as node.kubernetes.io/not-ready, and " +
			"taints the message does not name, prove nothing about the template) are reported for their workload, tied through their ReplicaSet or its " +
			"<deployment>-<pod-template-hash> name. Cannot see: node groups of cloud " +
			"autoscalers and Calico BGPPeers (not read; removed-node-labels judges BGPPeers on removed labels). " +
			"system-upgrade-controller Plans (upgrade.cattle.io/v1), with every Node in the input: high for a Plan whose " +
			"spec.nodeSelector requires node-role.kubernetes.io/master, which no node carries (it can complete without " +
			"upgrading anything), medium when other required labels or values match no node (it stays idle, which an opt-in " +
			"label may intend), medium for one that excludes by node-role.kubernetes.io/master while no node carries it and " +
			"nodes carry the control-plane label (it picks the control plane too). A Plan emptied only by its exclusions (an " +
			"agent Plan on a cluster of control-plane nodes only) is not reported.",
		Reads: append(check.Needs(snapshot.Nodes), check.Optional(snapshot.Deployments), check.Optional(snapshot.StatefulSets),
			check.Optional(snapshot.DaemonSets), check.Optional(snapshot.Jobs), check.Optional(snapshot.CronJobs),
			check.Optional(snapshot.KarpenterNodePools), check.Optional(snapshot.Pods), check.Optional(snapshot.Events),
			check.Optional(snapshot.ReplicaSets), check.Optional(snapshot.UpgradePlans)),
		Rules: []check.Rule{
			{ID: ruleNoNode, Summary: "templates whose nodeSelector and required node affinity match no node", Needs: templateNeeds},
			{ID: ruleLegacy, Summary: "templates selecting node-role.kubernetes.io/master on clusters whose control plane carries only the control-plane label", Needs: templateNeeds},
			{ID: ruleTaint, Summary: "templates whose matching nodes all carry a NoSchedule/NoExecute taint they do not tolerate", Needs: templateNeeds},
			{ID: ruleNoopExcl, Summary: "NotIn/DoesNotExist exclusions on a renamed label no node carries any more", Needs: templateNeeds},
			{ID: rulePlanSelector, Summary: "system-upgrade-controller Plans whose node selector matches no node or excludes by a label no node carries",
				Needs: []snapshot.Resource{snapshot.Nodes, snapshot.UpgradePlans}},
		},
		// Reddit's selectors were Calico BGPPeers, which this check does not
		// read (removed-node-labels does): the same mechanism, not its view.
		Cases: check.Cite(check.Detects(caseDell, caseHetzner), check.Related(caseReddit)),
		Run:   runSelectorMatchesNoNode,
	}
}

// workload is one pod template and its owner.
type workload struct {
	apiVersion, kind string
	meta             *metav1.ObjectMeta
	spec             *corev1.PodSpec
}

func (w workload) ref() finding.ObjectRef { return check.Ref(w.apiVersion, w.kind, w.meta) }
func (w workload) String() string         { return w.kind + " " + w.meta.Namespace + "/" + w.meta.Name }

// workloads lists the templates that may create pods: scaled to zero,
// finished Jobs, Jobs of a CronJob (judged through the CronJob) and
// suspended CronJobs are left out.
func workloads(s *snapshot.Snapshot) []workload {
	var out []workload
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 {
			out = append(out, workload{"apps/v1", "Deployment", &d.ObjectMeta, &d.Spec.Template.Spec})
		}
	}
	for i := range s.StatefulSets {
		d := &s.StatefulSets[i]
		if d.Spec.Replicas == nil || *d.Spec.Replicas > 0 {
			out = append(out, workload{"apps/v1", "StatefulSet", &d.ObjectMeta, &d.Spec.Template.Spec})
		}
	}
	for i := range s.DaemonSets {
		d := &s.DaemonSets[i]
		out = append(out, workload{"apps/v1", "DaemonSet", &d.ObjectMeta, &d.Spec.Template.Spec})
	}
	for i := range s.Jobs {
		j := &s.Jobs[i]
		if check.JobFinished(j) || ownedByCronJob(&j.ObjectMeta) {
			continue
		}
		out = append(out, workload{"batch/v1", "Job", &j.ObjectMeta, &j.Spec.Template.Spec})
	}
	for i := range s.CronJobs {
		c := &s.CronJobs[i]
		if c.Spec.Suspend != nil && *c.Spec.Suspend {
			continue
		}
		out = append(out, workload{"batch/v1", "CronJob", &c.ObjectMeta, &c.Spec.JobTemplate.Spec.Template.Spec})
	}
	return out
}

func ownedByCronJob(m *metav1.ObjectMeta) bool {
	for _, o := range m.OwnerReferences {
		if o.Kind == "CronJob" {
			return true
		}
	}
	return false
}

// selectorRun is one run's state.
type selectorRun struct {
	ctx    *check.Context
	facts  *selectorFacts
	ix     *nodeIndex
	su     *scaleUp
	ctrl   int // nodes labelled control-plane
	master int // nodes labelled master
	// matched memoises the nodes each distinct selection matches.
	matched map[string][]int
	keyBuf  []byte // the selection key matching looks up, reused
	version string
	// groups memoises the evidence of every node grouped by the values of
	// a list of label keys: many templates name the same keys, and each
	// grouping walks every node.
	groups map[string]nodeGroupsEvidence
}

// nodeGroupsEvidence is what addNodeGroups adds to a finding for every
// node and one list of label keys: its items and their evidence lines.
type nodeGroupsEvidence struct {
	items []finding.EvidenceItem
	lines []string
}

// addAllNodeGroups adds to f every node grouped by its values of keys, as
// addNodeGroups(f, r.ix.nodes, labelsOf(keys...)) does, computed once per
// list of keys; each finding gets its own copy of the items.
func (r *selectorRun) addAllNodeGroups(f *finding.Finding, keys []string) {
	memoKey := strings.Join(keys, "\x00")
	g, ok := r.groups[memoKey]
	if !ok {
		var tmp finding.Finding
		addNodeGroups(&tmp, r.ix.nodes, labelsOf(keys...))
		g = nodeGroupsEvidence{items: tmp.EvidenceItems, lines: tmp.Evidence}
		if r.groups == nil {
			r.groups = map[string]nodeGroupsEvidence{}
		}
		r.groups[memoKey] = g
	}
	for _, it := range g.items {
		it.Objects = slices.Clone(it.Objects)
		it.Fields = slices.Clone(it.Fields)
		f.EvidenceItems = append(f.EvidenceItems, it)
	}
	f.Evidence = append(f.Evidence, g.lines...)
}

func runSelectorMatchesNoNode(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadSelectorFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	nodesComplete := ctx.Complete(snapshot.Nodes)
	var verdicts map[string]*verdictGroup
	if !nodesComplete {
		// With every node in the input the run judges the templates
		// itself; without, the scheduler's verdicts on Pending pods are
		// what proves a template matches no node.
		verdicts = placementVerdicts(s)
	}
	if len(s.Nodes) == 0 {
		if nodesComplete {
			for _, r := range []string{ruleNoNode, ruleLegacy, ruleTaint, ruleNoopExcl, rulePlanSelector} {
				ctx.Skip(r, "the cluster has no nodes")
			}
			return nil, nil
		}
		if len(verdicts) == 0 {
			return nil, check.NotEvaluated("no Node in the input: selectors cannot be judged against node labels")
		}
	}
	r := &selectorRun{ctx: ctx, facts: facts, ix: newNodeIndex(s.Nodes), su: newScaleUp(ctx), matched: map[string][]int{}}
	r.ctrl, r.master = len(r.ix.byKey[labelCtrlPlane]), len(r.ix.byKey[labelMaster])
	if v, ev, ok := check.ServerVersion(s); ok {
		r.version = fmt.Sprintf("%s; %s", v.MinorString(), ev)
	}
	var out []finding.Finding
	var unknown []string
	templates := map[string]workload{}
	found := map[string]bool{}
	// The templates are keyed (a string each) only for the scheduler's
	// verdicts, which exist only when the nodes are not all in the input.
	keyed := len(verdicts) > 0
	for _, w := range workloads(s) {
		var key string
		if keyed {
			key = w.kind + "/" + w.meta.Namespace + "/" + w.meta.Name
			templates[key] = w
		}
		sel, ok := selectionOf(w.spec)
		if !ok {
			continue
		}
		nodes := r.matching(sel)
		if len(nodes) == 0 {
			if !nodesComplete {
				if _, proven := verdicts[key]; !keyed || !proven {
					unknown = append(unknown, w.String())
				}
				continue
			}
			out = append(out, r.noNodeFinding(w, sel))
			found[key] = true
			continue
		}
		if f, ok := r.taintFinding(w, sel, nodes, nodesComplete); ok {
			out = append(out, f)
			found[key] = true
		}
		if nodesComplete {
			if f, ok := r.noopFinding(w, sel); ok {
				out = append(out, f)
			}
		}
	}
	out = append(out, r.verdictFindings(verdicts, templates, found)...)
	out = append(out, r.planFindings(nodesComplete)...)
	if !nodesComplete {
		reason := "the Node list is not complete, so a template matching none of the nodes present may match one that is not"
		if len(unknown) > 0 {
			reason += fmt.Sprintf(" (%s: %s)", check.Plural(len(unknown), "template", "templates"), check.ListText(unknown, 5))
		}
		for _, id := range []string{ruleNoNode, ruleLegacy, ruleTaint, ruleNoopExcl} {
			ctx.Incomplete(id, "%s", reason)
		}
	}
	return out, nil
}

// matching returns the nodes meeting any of sel's terms, memoised.
func (r *selectorRun) matching(sel selection) []int {
	r.keyBuf = sel.appendKey(r.keyBuf[:0])
	if m, ok := r.matched[string(r.keyBuf)]; ok { // looked up without a string per template
		return m
	}
	key := string(r.keyBuf)
	var out []int
	seen := map[int]bool{}
	for _, t := range sel.terms {
		for _, i := range r.ix.matching(t) {
			if !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	r.matched[key] = out
	return out
}

// legacyMaster reports whether sel asks for the old master label while no
// node carries it and control-plane nodes carry the new one.
func (r *selectorRun) legacyMaster(sel selection) bool {
	if r.master > 0 || r.ctrl == 0 {
		return false
	}
	for _, t := range sel.terms {
		for _, q := range t {
			if !q.field && q.key == labelMaster && q.positive() {
				return true
			}
		}
	}
	return false
}
