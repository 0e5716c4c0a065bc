package availability

import (
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	karpenterID          = "karpenter-disruption-exposure"
	ruleKarpenterConsol  = "consolidation-unprotected-backends"
	ruleKarpenterAMIBug  = "ami-drift-defect-version"
	ruleKarpenterDetach  = "stateful-detach-stall"
	caseKarpenterDetach  = "ebs-csi-karpenter-multi-attach-six-minute-stall-2020-2025"
	caseKarpenterNoPDB   = "karpenter-consolidation-no-pdb-api-gateway-outage-2025"
	caseKarpenterAMIBug  = "karpenter-ami-drift-defect-unexpected-replacement-2024"
	karpenterPoolLabel   = "karpenter.sh/nodepool"
	karpenterUnderutil   = "Underutilized"
	karpenterPolicyUnder = "WhenEmptyOrUnderutilized"
)

//go:embed data/karpenter-disruption-exposure.yaml
var karpenterData []byte

type karpenterFacts struct {
	Sources  []string `json:"sources"`
	Defaults struct {
		ConsolidationPolicy string   `json:"consolidationPolicy"`
		ConsolidateAfter    string   `json:"consolidateAfter"`
		BudgetNodes         string   `json:"budgetNodes"`
		Sources             []string `json:"sources"`
	} `json:"defaults"`
	ShortConsolidateAfter        string   `json:"shortConsolidateAfter"`
	ShortConsolidateAfterSources []string `json:"shortConsolidateAfterSources"`
	ControllerImages             []string `json:"controllerImages"`
	ControllerImageSources       []string `json:"controllerImageSources"`
	AMIDriftDefect               []struct {
		Line    string   `json:"line"`
		FixedIn string   `json:"fixedIn"`
		Sources []string `json:"sources"`
	} `json:"amiDriftDefect"`
	DetachStall struct {
		FixedIn      string   `json:"fixedIn"`
		Provisioners []string `json:"provisioners"`
		Sources      []string `json:"sources"`
	} `json:"detachStall"`

	short time.Duration
}

var loadKarpenterFacts = check.Facts("data/karpenter-disruption-exposure.yaml", karpenterData, func(f *karpenterFacts) error {
	const file = "data/karpenter-disruption-exposure.yaml"
	if len(f.Defaults.Sources) == 0 || len(f.ShortConsolidateAfterSources) == 0 || len(f.ControllerImageSources) == 0 ||
		len(f.ControllerImages) == 0 || len(f.AMIDriftDefect) == 0 {
		return fmt.Errorf("%s: defaults, shortConsolidateAfter, controllerImages and amiDriftDefect all need their sources", file)
	}
	d, err := time.ParseDuration(f.ShortConsolidateAfter)
	if err != nil || d <= 0 {
		return fmt.Errorf("%s: bad shortConsolidateAfter %q", file, f.ShortConsolidateAfter)
	}
	f.short = d
	if _, ok := check.ParseKubeVersion(f.DetachStall.FixedIn); !ok || len(f.DetachStall.Provisioners) == 0 || len(f.DetachStall.Sources) == 0 {
		return fmt.Errorf("%s: detachStall needs a fixedIn version, provisioners and sources", file)
	}
	for _, r := range f.AMIDriftDefect {
		v, ok := check.ParseKubeVersion(r.FixedIn)
		if !ok || len(r.Sources) == 0 || fmt.Sprintf("%d.%d", v.Major, v.Minor) != r.Line {
			return fmt.Errorf("%s: amiDriftDefect row %q needs a fixedIn on its line and sources", file, r.Line)
		}
	}
	return nil
})

// karpenterDisruptionExposureCheck finds Karpenter set-ups in which one
// consolidation pass or a defective drift check can take many nodes at
// once: a NodePool whose budget lets every node go for consolidation while
// Service backends with no PodDisruptionBudget have all their pods on it,
// and a controller on a release the AWS notice lists for the AMI drift
// defect.
func karpenterDisruptionExposureCheck() check.Check {
	return check.Check{
		ID:       karpenterID,
		Title:    "Karpenter NodePools that may consolidate every node at once under unprotected Services, a controller with the AMI drift defect, or one that deletes nodes before their EBS volumes detach",
		Severity: finding.High,
		Description: "Two rules. consolidation-unprotected-backends (high): a karpenter.sh/v1 NodePool with consolidationPolicy " +
			"WhenEmptyOrUnderutilized (the default) whose always-active disruption budgets that apply to Underutilized (no " +
			"reasons, or Underutilized among them) allow 100% of its nodes, or whose budgets are all for other reasons, while " +
			"a Deployment or StatefulSet backing a Service runs every pod on that pool's nodes (label karpenter.sh/nodepool) " +
			"and no PodDisruptionBudget selects it: one consolidation pass may evict every backend together, as in the 2025 " +
			"API gateway outage (budget 100%, consolidateAfter 30s, no PDB). A consolidateAfter under a minute (our policy, " +
			"from that case) is named in the evidence. Budgets with a schedule only restrict during their window and are not " +
			"counted as a limit; a budget left unset is Karpenter's default of 10%. ami-drift-defect-version (high): the " +
			"Karpenter controller (public.ecr.aws/karpenter/controller) on 0.31.0-0.36.1 below its minor's patch release " +
			"(0.31.5, 0.32.10, 0.33.5, 0.34.6, 0.35.5, 0.36.2), which AWS told EKS customers can replace nodes unexpectedly " +
			"through a defect in AMI drift detection. A controller image with no readable tag leaves the rule partial. EKS " +
			"Auto Mode runs Karpenter for the customer with no controller Deployment to read; its NodePools are judged alike. " +
			"stateful-detach-stall (medium): the Karpenter controller on a release below 1.0.0, which deletes a node without " +
			"waiting for its VolumeAttachments, while a StatefulSet asks in its volumeClaimTemplates for ReadWriteOnce or " +
			"ReadWriteOncePod volumes of an EBS StorageClass (provisioner ebs.csi.aws.com, or kubernetes.io/aws-ebs, which CSI " +
			"migration hands to the same driver; an unset storageClassName is the default class) and runs pods on nodes labelled " +
			"karpenter.sh/nodepool: each consolidation, drift or interruption of such a node may leave the moved pod on " +
			"Multi-Attach error until the attach/detach controller force-detaches after six minutes.",
		Reads: check.Needs(snapshot.KarpenterNodePools, snapshot.Deployments, snapshot.Services, snapshot.StatefulSets,
			snapshot.PodDisruptionBudgets, snapshot.Pods, snapshot.Nodes, snapshot.StorageClasses),
		Rules: []check.Rule{
			{ID: ruleKarpenterConsol, Summary: "no NodePool may consolidate all its nodes at once under Service backends with no PodDisruptionBudget",
				Needs: []snapshot.Resource{snapshot.KarpenterNodePools, snapshot.Deployments, snapshot.Services, snapshot.StatefulSets,
					snapshot.PodDisruptionBudgets, snapshot.Pods, snapshot.Nodes}},
			{ID: ruleKarpenterAMIBug, Summary: "the Karpenter controller is not on a release with the AMI drift defect",
				Needs: []snapshot.Resource{snapshot.Deployments}},
			{ID: ruleKarpenterDetach, Summary: "no StatefulSet with ReadWriteOnce EBS volumes runs on nodes of a Karpenter release that deletes nodes before their volumes detach",
				Needs: []snapshot.Resource{snapshot.Deployments, snapshot.StatefulSets, snapshot.StorageClasses, snapshot.Pods, snapshot.Nodes}},
		},
		Cases: check.Prevents(caseKarpenterNoPDB, caseKarpenterAMIBug, caseKarpenterDetach),
		Run:   runKarpenterDisruptionExposure,
	}
}

func runKarpenterDisruptionExposure(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadKarpenterFacts()
	if err != nil {
		return nil, err
	}
	out := karpenterVersionFindings(ctx, facts)
	out = append(out, karpenterDetachStallFindings(ctx, facts)...)
	return append(out, karpenterConsolidationFindings(ctx, facts)...), nil
}

// karpenterVersionFindings reports Karpenter controllers on a release of
// the AMI drift defect.
func karpenterVersionFindings(ctx *check.Context, facts *karpenterFacts) []finding.Finding {
	var out []finding.Finding
	var unreadable []string
	for i := range ctx.Snapshot.Deployments {
		d := &ctx.Snapshot.Deployments[i]
		cs := d.Spec.Template.Spec.Containers
		for j := range cs {
			c := &cs[j] // by index: not a copy of every container
			repo, tag, _ := check.ImageParts(c.Image)
			if !isKarpenterController(facts, repo) {
				continue
			}
			v, ok := check.ParseKubeVersion(tag)
			if !ok {
				unreadable = append(unreadable, "Deployment "+d.Namespace+"/"+d.Name)
				continue
			}
			for _, r := range facts.AMIDriftDefect {
				fixed, _ := check.ParseKubeVersion(r.FixedIn)
				if v.Major != fixed.Major || v.Minor != fixed.Minor || !v.Less(fixed) {
					continue
				}
				ref := check.Ref("apps/v1", "Deployment", &d.ObjectMeta)
				f := finding.Finding{
					Check:    karpenterID,
					Severity: finding.High,
					Title:    fmt.Sprintf("Karpenter controller %s/%s runs %s, a release with the AMI drift defect", d.Namespace, d.Name, tag),
					Message: fmt.Sprintf("Deployment %s/%s runs the Karpenter controller at %s. AWS told EKS customers that a defect in the AMI "+
						"drift detection of Karpenter 0.31 to 0.36 can replace nodes nobody asked to replace, and asked them to move to "+
						"the patch release of their minor; for %s that is %s. Drift is judged for every node of every NodePool, so a "+
						"wrong result reaches the whole fleet, paced only by the disruption budgets.", d.Namespace, d.Name, tag, r.Line, r.FixedIn),
					Objects: []finding.ObjectRef{ref},
					Remediation: fmt.Sprintf("Upgrade Karpenter to %s or later (helm upgrade of the karpenter chart at that version), and pin "+
						"AMIs (an amiSelectorTerms id or a versioned alias) with a NodePool disruption budget for Drifted so that drift rolls slowly.", r.FixedIn),
					Cases:    []string{caseKarpenterAMIBug},
					Evidence: []string{"affected: " + r.Line + " below " + r.FixedIn + " (" + strings.Join(r.Sources, " ") + ")"},
				}
				f.AddEvidence(finding.Quote(ref, finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image)))
				out = append(out, f)
			}
		}
	}
	if len(unreadable) > 0 {
		ctx.Incomplete(ruleKarpenterAMIBug, "the Karpenter controller image of %s has no version tag to judge", check.ListText(unreadable, 5))
	}
	return out
}

func isKarpenterController(facts *karpenterFacts, repo string) bool {
	for _, img := range facts.ControllerImages {
		if repo == img {
			return true
		}
	}
	return false
}

// karpenterPool is what the consolidation rule reads of one NodePool.
type karpenterPool struct {
	obj          *unstructured.Unstructured
	ref          finding.ObjectRef
	policy       string // as set, "" when defaulted
	after        string // as set, "" when defaulted
	budgets      []map[string]any
	budgetsUnset bool
	// allowAll says why Underutilized consolidation is unbounded, or "".
	allowAll string
}

// readKarpenterPool judges whether p may consolidate all its nodes at once.
func readKarpenterPool(u *unstructured.Unstructured, facts *karpenterFacts) karpenterPool {
	p := karpenterPool{obj: u, ref: finding.ObjectRef{APIVersion: u.GetAPIVersion(), Kind: "NodePool", Name: u.GetName()}}
	p.policy, _, _ = unstructured.NestedString(u.Object, "spec", "disruption", "consolidationPolicy")
	p.after, _, _ = unstructured.NestedString(u.Object, "spec", "disruption", "consolidateAfter")
	raw, found, _ := unstructured.NestedSlice(u.Object, "spec", "disruption", "budgets")
	p.budgetsUnset = !found
	for _, b := range raw {
		if m, ok := b.(map[string]any); ok {
			p.budgets = append(p.budgets, m)
		}
	}
	policy := p.policy
	if policy == "" {
		policy = facts.Defaults.ConsolidationPolicy
	}
	if policy != karpenterPolicyUnder || p.after == "Never" || p.budgetsUnset {
		return p // WhenEmpty, consolidation off, or the default 10% budget
	}
	applying := 0
	for _, b := range p.budgets {
		if _, scheduled := b["schedule"]; scheduled {
			continue // active only in its window
		}
		if !budgetApplies(b) {
			continue
		}
		applying++
		if nodes, _ := b["nodes"].(string); nodes != "100%" {
			return p
		}
	}
	if applying == 0 {
		p.allowAll = "no always-active budget applies to Underutilized"
	} else {
		p.allowAll = `every always-active budget for Underutilized allows nodes "100%"`
	}
	return p
}

func budgetApplies(b map[string]any) bool {
	reasons, _ := b["reasons"].([]any)
	if len(reasons) == 0 {
		return true
	}
	for _, r := range reasons {
		if r == karpenterUnderutil {
			return true
		}
	}
	return false
}

// karpenterConsolidationFindings reports Service backends with no
// PodDisruptionBudget whose every pod runs on a NodePool that may
// consolidate all its nodes at once.
func karpenterConsolidationFindings(ctx *check.Context, facts *karpenterFacts) []finding.Finding {
	s := ctx.Snapshot
	pools := map[string]karpenterPool{}
	objs := s.CustomObjects(snapshot.KarpenterNodePools)
	for i := range objs {
		if p := readKarpenterPool(&objs[i], facts); p.allowAll != "" {
			pools[p.obj.GetName()] = p
		}
	}
	if len(pools) == 0 {
		return nil
	}
	ix := s.Index()
	// poolOf maps each node in the input to its NodePool ("" for none).
	poolOf := make(map[string]string, len(s.Nodes))
	for i := range s.Nodes {
		poolOf[s.Nodes[i].Name] = s.Nodes[i].Labels[karpenterPoolLabel]
	}
	// Each Service's selector is built once here, not once per workload
	// of its namespace.
	type selectingService struct {
		svc *corev1.Service
		sel labels.Selector
	}
	servicesByNS := map[string][]selectingService{}
	for i := range s.Services {
		if svc := &s.Services[i]; len(svc.Spec.Selector) > 0 {
			servicesByNS[svc.Namespace] = append(servicesByNS[svc.Namespace], selectingService{svc, labels.SelectorFromSet(svc.Spec.Selector)})
		}
	}
	pdbsByNS := map[string][]labels.Selector{}
	for i := range s.PodDisruptionBudgets {
		p := &s.PodDisruptionBudgets[i]
		if sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && p.Spec.Selector != nil && !sel.Empty() {
			pdbsByNS[p.Namespace] = append(pdbsByNS[p.Namespace], sel)
		}
	}
	var out []finding.Finding
	var unknown []string
	for _, w := range replicatedWorkloads(s) {
		set := labels.Set(w.labels)
		var backs []*corev1.Service
		for _, b := range servicesByNS[w.meta.Namespace] {
			if b.sel.Matches(set) {
				backs = append(backs, b.svc)
			}
		}
		if len(backs) == 0 || w.selector == nil {
			continue
		}
		covered := false
		for _, sel := range pdbsByNS[w.meta.Namespace] {
			if sel.Matches(set) {
				covered = true
				break
			}
		}
		if covered {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(w.selector)
		if err != nil || sel.Empty() {
			continue
		}
		pool, running, nodes, ok, missing := onePool(poolOf, ix.PodsMatching(w.meta.Namespace, sel))
		if missing {
			unknown = append(unknown, w.String())
			continue
		}
		p, exposed := pools[pool]
		if !ok || !exposed {
			continue
		}
		if !ctx.CompleteIn(snapshot.PodDisruptionBudgets, w.meta.Namespace) {
			unknown = append(unknown, w.String())
			continue
		}
		out = append(out, karpenterConsolidationFinding(facts, p, w, backs, running, nodes))
	}
	if len(unknown) > 0 {
		ctx.Incomplete(ruleKarpenterConsol, "the nodes or PodDisruptionBudgets of %s are not all in the input", check.ListText(unknown, 5))
	}
	return out
}

// karpenterListedNodes is how many of a backend's nodes a finding names.
const karpenterListedNodes = 5

// onePool returns the NodePool every one of pods runs on, how many pods,
// and the first few of their nodes (in pod order); ok is false when they
// are on several pools, on nodes of no pool, or none is scheduled;
// missing when a node is not in the input.
func onePool(poolOf map[string]string, pods []*snapshot.Pod) (pool string, running int, nodes []string, ok, missing bool) {
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
			continue
		}
		np, known := poolOf[p.Spec.NodeName]
		if !known {
			return "", 0, nil, false, true
		}
		switch {
		case np == "":
			return "", 0, nil, false, false
		case pool == "":
			pool = np
		case pool != np:
			return "", 0, nil, false, false
		}
		running++
		if len(nodes) < karpenterListedNodes && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	return pool, running, nodes, pool != "", false
}

func karpenterConsolidationFinding(facts *karpenterFacts, p karpenterPool, w replicated, backs []*corev1.Service, running int, nodes []string) finding.Finding {
	names := make([]string, len(backs))
	for i, b := range backs {
		names[i] = b.Name
	}
	policy := p.policy
	if policy == "" {
		policy = facts.Defaults.ConsolidationPolicy + " (the default)"
	}
	after := p.after
	if after == "" {
		after = facts.Defaults.ConsolidateAfter + " (the default)"
	}
	short := false
	if d, err := time.ParseDuration(strings.TrimSuffix(after, " (the default)")); err == nil && d < facts.short {
		short = true
	}
	msg := fmt.Sprintf("NodePool %s consolidates underutilized nodes (consolidationPolicy %s) and %s, so Karpenter may drain every "+
		"node of the pool in one pass. %s backs Service %s in namespace %s, its running pods (%d) are all on that pool's nodes, and no "+
		"PodDisruptionBudget selects its pods: nothing holds the evictions back, and the Service can lose every backend at once.",
		p.obj.GetName(), policy, p.allowAll, w, strings.Join(names, ", "), w.meta.Namespace, running)
	if short {
		msg += fmt.Sprintf(" With consolidateAfter %s, under %s, a node becomes a candidate almost as soon as its pods last changed.", after, facts.ShortConsolidateAfter)
	}
	f := finding.Finding{
		Check:    karpenterID,
		Severity: finding.High,
		Title:    fmt.Sprintf("NodePool %s may consolidate all its nodes at once under %s, which has no PodDisruptionBudget", p.obj.GetName(), w),
		Message:  msg,
		Objects:  []finding.ObjectRef{p.ref, w.ref()},
		Remediation: "Give the NodePool a budget for Underutilized well below 100% (the default is nodes \"10%\"), or WhenEmpty with a " +
			"consolidateAfter of minutes, and add a PodDisruptionBudget (maxUnavailable 1, or minAvailable 50%) to every Service backend on it.",
		Cases: []string{caseKarpenterNoPDB},
		Evidence: []string{
			fmt.Sprintf("consolidateAfter %s; budgets: %s", after, budgetText(p.budgets)),
			fmt.Sprintf("%s, all on nodes labelled %s=%s, among them %s", check.Plural(running, "running pod", "running pods"),
				karpenterPoolLabel, p.obj.GetName(), strings.Join(nodes, ", ")),
			fmt.Sprintf("no PodDisruptionBudget in namespace %s selects %s", w.meta.Namespace, labels.Set(w.labels).String()),
			"defaults: " + strings.Join(facts.Defaults.Sources, " "),
		},
	}
	for i, b := range backs {
		if i == check.MaxListedObjects {
			break
		}
		f.Objects = append(f.Objects, check.Ref("v1", "Service", &b.ObjectMeta))
	}
	fields := []finding.Field{finding.Value("spec.disruption.consolidationPolicy", p.policy)}
	if p.after != "" {
		fields = append(fields, finding.Value("spec.disruption.consolidateAfter", p.after))
	}
	for i, b := range p.budgets {
		if nodes, ok := b["nodes"].(string); ok {
			fields = append(fields, finding.Value("spec.disruption.budgets["+strconv.Itoa(i)+"].nodes", nodes))
		}
	}
	f.AddEvidence(finding.Quote(p.ref, fields...))
	var onNodes finding.Grouper
	for _, n := range nodes {
		onNodes.Add(check.NodeRef(n), finding.Entry("metadata.labels["+karpenterPoolLabel+"]", p.obj.GetName()))
	}
	f.AddEvidence(onNodes.Items()...)
	return f
}

func budgetText(budgets []map[string]any) string {
	if len(budgets) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(budgets))
	for _, b := range budgets {
		t := fmt.Sprintf("nodes %v", b["nodes"])
		if r, ok := b["reasons"].([]any); ok && len(r) > 0 {
			t += fmt.Sprintf(" for %v", r)
		}
		if s, ok := b["schedule"]; ok {
			t += fmt.Sprintf(" during %v for %v", s, b["duration"])
		}
		parts = append(parts, t)
	}
	return strings.Join(parts, "; ")
}
