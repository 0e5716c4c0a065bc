package agents

// api-heavy-node-agents: which ServiceAccounts the input's RBAC lets read the
// heavy resources, and the evidence items that quote those grants.

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// grant is one way a ServiceAccount may list or watch a resource: the
// ClusterRoleBinding subject naming it, the ClusterRole bound, and the
// rule that allows the read (in that role, or one it aggregates).
type grant struct {
	role, binding string
	subject       int
	subjectKind   string
	subjectName   string
	subjectNS     string
	ruleRole      string
	ruleIndex     int
	rule          rbacv1.PolicyRule
}

// ownedRule is a policy rule and where it is written.
type ownedRule struct {
	role  string
	index int
	rule  rbacv1.PolicyRule
}

// boundSubject is one subject of a ClusterRoleBinding.
type boundSubject struct {
	binding *rbacv1.ClusterRoleBinding
	subject int
}

// rbacIndex answers which cluster-wide read grants a ServiceAccount holds.
type rbacIndex struct {
	// rules of each ClusterRole, aggregation applied.
	rules map[string][]ownedRule
	// bindings by subject: "sa:ns/name", "group:name", "user:name".
	bindings map[string][]boundSubject
}

func newRBACIndex(s *snapshot.Snapshot) *rbacIndex {
	ix := &rbacIndex{rules: map[string][]ownedRule{}, bindings: map[string][]boundSubject{}}
	own := func(cr *rbacv1.ClusterRole) []ownedRule {
		out := make([]ownedRule, len(cr.Rules))
		for i, r := range cr.Rules {
			out[i] = ownedRule{cr.Name, i, r}
		}
		return out
	}
	for i := range s.ClusterRoles {
		cr := &s.ClusterRoles[i]
		ix.rules[cr.Name] = append(ix.rules[cr.Name], own(cr)...)
	}
	// An aggregated role holds the rules of every role its selectors
	// match. The API server fills them in; objects from files may not.
	for i := range s.ClusterRoles {
		cr := &s.ClusterRoles[i]
		if cr.AggregationRule == nil {
			continue
		}
		for _, sel := range cr.AggregationRule.ClusterRoleSelectors {
			ls, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil || ls.Empty() {
				continue
			}
			for j := range s.ClusterRoles {
				if j != i && ls.Matches(labels.Set(s.ClusterRoles[j].Labels)) {
					ix.rules[cr.Name] = append(ix.rules[cr.Name], own(&s.ClusterRoles[j])...)
				}
			}
		}
	}
	for i := range s.ClusterRoleBindings {
		b := &s.ClusterRoleBindings[i]
		if b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		for j, sub := range b.Subjects {
			var key string
			switch sub.Kind {
			case rbacv1.ServiceAccountKind:
				key = "sa:" + sub.Namespace + "/" + sub.Name
			case rbacv1.GroupKind:
				key = "group:" + sub.Name
			case rbacv1.UserKind:
				key = "user:" + sub.Name
			default:
				continue
			}
			ix.bindings[key] = append(ix.bindings[key], boundSubject{b, j})
		}
	}
	return ix
}

// reads returns, per group/resource, how the ServiceAccount ns/name may
// list or watch it cluster-wide.
func (ix *rbacIndex) reads(ns, name string, want []struct{ group, resource string }) map[string]grant {
	out := map[string]grant{}
	keys := []string{"sa:" + ns + "/" + name, "user:system:serviceaccount:" + ns + ":" + name,
		"group:system:serviceaccounts", "group:system:serviceaccounts:" + ns}
	for _, k := range keys {
		for _, bs := range ix.bindings[k] {
			b := bs.binding
			sub := b.Subjects[bs.subject]
			for _, rule := range ix.rules[b.RoleRef.Name] {
				for _, w := range want {
					key := w.resource
					if _, seen := out[key]; !seen && allowsRead(rule.rule, w.group, w.resource) {
						out[key] = grant{role: b.RoleRef.Name, binding: b.Name, subject: bs.subject, subjectKind: sub.Kind,
							subjectName: sub.Name, subjectNS: sub.Namespace, ruleRole: rule.role, ruleIndex: rule.index, rule: rule.rule}
					}
				}
			}
		}
	}
	return out
}

// grantItems quotes the bindings and rules behind grants: each
// ClusterRoleBinding subject once, each rule once, in the order given.
func grantItems(gs []grant) []finding.EvidenceItem {
	var out []finding.EvidenceItem
	seen := map[string]bool{}
	add := func(it finding.EvidenceItem) {
		if line := it.String(); !seen[line] {
			seen[line] = true
			out = append(out, it)
		}
	}
	for _, g := range gs {
		sub := fmt.Sprintf("subjects[%d].", g.subject)
		fields := []finding.Field{finding.Value("roleRef.name", g.role), finding.Value(sub+"kind", g.subjectKind), finding.Value(sub+"name", g.subjectName)}
		if g.subjectNS != "" {
			fields = append(fields, finding.Value(sub+"namespace", g.subjectNS))
		}
		add(finding.Quote(finding.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding", Name: g.binding}, fields...))
		add(finding.Quote(finding.ObjectRef{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: g.ruleRole},
			finding.Value(fmt.Sprintf("rules[%d]", g.ruleIndex), finding.JSONText(g.rule))))
	}
	return out
}

// allowsRead reports whether a policy rule allows list or watch of every
// object of group/resource.
func allowsRead(r rbacv1.PolicyRule, group, resource string) bool {
	if len(r.ResourceNames) > 0 {
		return false
	}
	verb := slices.Contains(r.Verbs, "list") || slices.Contains(r.Verbs, "watch") || slices.Contains(r.Verbs, "*")
	grp := slices.Contains(r.APIGroups, group) || slices.Contains(r.APIGroups, "*")
	res := slices.Contains(r.Resources, resource) || slices.Contains(r.Resources, "*")
	return verb && grp && res
}

func serviceAccount(ds *appsv1.DaemonSet) string {
	if sa := ds.Spec.Template.Spec.ServiceAccountName; sa != "" {
		return sa
	}
	if sa := ds.Spec.Template.Spec.DeprecatedServiceAccount; sa != "" {
		return sa
	}
	return "default"
}

// weight is how many nodes a DaemonSet runs on: its status, else the nodes
// in the input its pods can land on (nodeSelector, required node affinity
// and taints, check.DaemonSetPlacement), so that a GPU-only agent counts
// the GPU nodes. ok is false when neither is known.
func weight(ds *appsv1.DaemonSet, nodes []corev1.Node) (n int, how string, ok bool) {
	st := &ds.Status
	if d := st.DesiredNumberScheduled; d > 0 || st.ObservedGeneration > 0 {
		return int(d), fmt.Sprintf("status.desiredNumberScheduled %d", d), true
	}
	if len(nodes) == 0 {
		return 0, "", false
	}
	p := check.DaemonSetPlacement(ds)
	n = len(p.Nodes(nodes))
	return n, fmt.Sprintf("%d of %d nodes in the input match its nodeSelector and required node affinity and "+
		"tolerate their taints (no status in the input)", n, len(nodes)), true
}

// daemonSetItem quotes what a finding reads of a DaemonSet: its node
// count from status (or, when that comes from the nodes, its
// nodeSelector), its service account as the template names it (absent:
// "default"), and more fields a caller adds.
func daemonSetItem(ds *appsv1.DaemonSet, more ...finding.Field) finding.EvidenceItem {
	var fields []finding.Field
	if st := &ds.Status; st.DesiredNumberScheduled > 0 || st.ObservedGeneration > 0 {
		fields = append(fields, finding.Value("status.desiredNumberScheduled", st.DesiredNumberScheduled))
	} else if sel := ds.Spec.Template.Spec.NodeSelector; len(sel) > 0 {
		fields = append(fields, finding.Value("spec.template.spec.nodeSelector", finding.JSONText(sel)))
	} else {
		fields = append(fields, finding.Absent("spec.template.spec.nodeSelector"))
	}
	spec := &ds.Spec.Template.Spec
	switch {
	case spec.ServiceAccountName != "":
		fields = append(fields, finding.Value("spec.template.spec.serviceAccountName", spec.ServiceAccountName))
	case spec.DeprecatedServiceAccount != "":
		fields = append(fields, finding.Absent("spec.template.spec.serviceAccountName"),
			finding.Value("spec.template.spec.serviceAccount", spec.DeprecatedServiceAccount))
	default:
		fields = append(fields, finding.Absent("spec.template.spec.serviceAccountName"), finding.Absent("spec.template.spec.serviceAccount"))
	}
	return finding.Quote(check.Ref("apps/v1", "DaemonSet", ds), append(fields, more...)...)
}

func images(ds *appsv1.DaemonSet) []string {
	var out []string
	for _, c := range ds.Spec.Template.Spec.Containers {
		out = append(out, check.ImageName(c.Image))
	}
	return out
}

func argsText(ds *appsv1.DaemonSet) string {
	var b strings.Builder
	for _, c := range ds.Spec.Template.Spec.Containers {
		b.WriteString(strings.Join(c.Command, " ") + " " + strings.Join(c.Args, " ") + " ")
	}
	return b.String()
}

func isCalicoNode(ds *appsv1.DaemonSet, f fanInFact) bool {
	if ds.Name == f.AgentDaemonSet {
		return true
	}
	cs := ds.Spec.Template.Spec.Containers
	for j := range cs {
		if cs[j].Name == f.AgentDaemonSet {
			return true
		}
	}
	return false
}

// fanInPresent finds a Deployment running the fan-in image (Typha).
func fanInPresent(s *snapshot.Snapshot, f fanInFact) *appsv1.Deployment {
	for i := range s.Deployments {
		d := &s.Deployments[i]
		if d.Name == f.Name {
			return d
		}
		cs := d.Spec.Template.Spec.Containers
		for j := range cs { // by index: a copy of each container read its image
			if check.ImageName(cs[j].Image) == f.FanInImage {
				return d
			}
		}
	}
	return nil
}

func runAPIHeavyNodeAgents(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadAgentFacts()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	ix := newRBACIndex(s)
	var out []finding.Finding
	calico := facts.FanIn[0]
	typha := fanInPresent(s, calico)
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		n, how, ok := weight(ds, s.Nodes)
		if !ok {
			ctx.Incomplete("cluster-wide-readers", "DaemonSet %s/%s: no status and no nodes in the input, so its node count is unknown", ds.Namespace, ds.Name)
			continue
		}
		if isCalicoNode(ds, calico) && n > calico.Nodes {
			if f, ok := calicoWithoutTypha(ctx, ds, n, how, calico, typha); ok {
				out = append(out, f)
			}
		}
		if f, ok := readerFinding(ds, n, how, ix, facts, calico, typha); ok {
			out = append(out, f)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Severity > out[j].Severity })
	return out, nil
}

func calicoWithoutTypha(ctx *check.Context, ds *appsv1.DaemonSet, n int, how string, f fanInFact, typha *appsv1.Deployment) (finding.Finding, bool) {
	if typha != nil {
		return finding.Finding{}, false
	}
	if !ctx.Complete(snapshot.Deployments) {
		ctx.Incomplete("calico-without-typha", "calico-node runs on %d nodes and no Typha Deployment is in the input, "+
			"but Deployments were not read completely", n)
		return finding.Finding{}, false
	}
	sev := finding.Medium
	if n >= fanInHigh {
		sev = finding.High
	}
	var images []finding.Field // the calico-node containers' images
	for _, c := range ds.Spec.Template.Spec.Containers {
		if ds.Name == f.AgentDaemonSet || c.Name == f.AgentDaemonSet {
			images = append(images, finding.Value(check.ContainerField("DaemonSet", "", c.Name, "image"), c.Image))
		}
	}
	out := finding.Finding{
		Check:    "api-heavy-node-agents",
		Severity: sev,
		Title:    fmt.Sprintf("calico-node runs on %d nodes without Typha", n),
		Message: fmt.Sprintf("DaemonSet %s/%s runs calico-node on %d nodes and no Deployment runs Typha, so every "+
			"calico-node lists and watches the API server itself; on a restart or an API server failover they all "+
			"re-list pods at once, and one slow answer makes each retry the full LIST.", ds.Namespace, ds.Name, n),
		Objects: []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)},
		Remediation: "Install Typha (the Tigera operator does so itself; with manifests, use the ones for more than 50 " +
			"nodes) with at least three replicas, and point calico-node at it.",
		Cases: []string{"calico-node-full-resync-list-storm-eks-2021"},
	}
	out.AddEvidence(daemonSetItem(ds, images...))
	out.Evidence = append(out.Evidence, how, "Deployments read completely: none named calico-typha or running a typha image",
		strings.TrimSpace(f.Fact))
	return out, true
}
