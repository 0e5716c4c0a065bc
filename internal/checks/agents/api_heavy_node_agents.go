package agents

import (
	_ "embed"
	"errors"
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

//go:embed data/api-heavy-node-agents.yaml
var agentFactsYAML []byte

type fanInFact struct {
	Name           string   `json:"name"`
	AgentDaemonSet string   `json:"agentDaemonSet"`
	FanInImage     string   `json:"fanInImage"`
	Nodes          int      `json:"nodes"`
	Fact           string   `json:"fact"`
	Sources        []string `json:"sources"`
}

type kubeletModeFact struct {
	Name    string   `json:"name"`
	Images  []string `json:"images"`
	Setting string   `json:"setting"`
	Fact    string   `json:"fact"`
	Sources []string `json:"sources"`
}

type agentFacts struct {
	FanIn       []fanInFact       `json:"fanIn"`
	KubeletMode []kubeletModeFact `json:"kubeletMode"`
}

var loadAgentFacts = check.Facts("node agent facts", agentFactsYAML, func(f *agentFacts) error {
	if len(f.FanIn) == 0 || len(f.KubeletMode) == 0 {
		return errors.New("node agent facts: fanIn and kubeletMode are required")
	}
	return nil
})

// Policy, not fact: how many copies of one cluster-wide reader make a load
// worth a finding. The cited clusters fell over with agents on 225 to
// thousands of nodes; every node's agent holds its own LIST and watch.
const (
	readersWarn = 200
	readersHigh = 1000
	// Secrets: every copy holds every Secret of the cluster, and one
	// Deployment's Secret reads alone drove 100 MB/s out of etcd.
	secretReadersWarn = 50
	secretReadersHigh = 500
	// fanInHigh: Calico without Typha at this size is where the cited
	// API server gave way (225 and 700 nodes).
	fanInHigh = 200
)

// heavyResources are the kinds whose cluster-wide LIST grows with the
// cluster: one object per pod, node or endpoint.
var heavyResources = []struct{ group, resource string }{
	{"", "pods"}, {"", "nodes"}, {"", "endpoints"}, {"discovery.k8s.io", "endpointslices"},
}

// logAgentImages name log shippers, whose metadata filters read pods.
var logAgentImages = []string{"fluent-bit", "aws-for-fluent-bit", "fluentd", "fluentd-kubernetes-daemonset"}

func apiHeavyNodeAgentsCheck() check.Check {
	return check.Check{
		ID:       "api-heavy-node-agents",
		Title:    "Per-node agents that each list and watch the whole cluster",
		Severity: finding.High,
		Description: "Follows each DaemonSet's ServiceAccount through ClusterRoleBindings to ClusterRoles (aggregated " +
			"roles and wildcards included) and reports agents allowed to list or watch pods, nodes, endpoints or " +
			"EndpointSlices cluster-wide, weighted by the nodes they run on (status.desiredNumberScheduled, else the " +
			"nodes whose labels match their nodeSelector and required node affinity and whose taints they tolerate): " +
			"every node's copy keeps its own LIST and watch, so the load grows with " +
			"nodes times cluster size, and a restart or an API server failover sends all the full LISTs at once. " +
			"Medium from 200 nodes, high from 1,000 (policy); agents allowed to list Secrets cluster-wide from 50 and " +
			"500. Calico's calico-node without a Typha Deployment is reported above the 50 nodes at which Calico " +
			"recommends Typha, high from 200. Fluent Bit with Use_Kubelet in its arguments reads pod metadata from the " +
			"kubelet and is not counted; its configuration file, in a ConfigMap kubegap does not read, is not seen. " +
			"RBAC is what an agent may do, not what it does: an informer-based agent may read far less. An agent whose " +
			"template tells it its own node's name (an environment variable from the downward API's spec.nodeName, or " +
			"a --node-name, --nodeid or --hostname-override argument) is wired for a field selector on its node, so " +
			"its pod and node reads are reported as low; endpoint and Secret reads are not bounded by a node name, and " +
			"log agents and calico-node (which without Typha lists every pod itself) are not lowered.",
		Reads: []check.Input{
			check.Optional(snapshot.DaemonSets),
			check.Optional(snapshot.ClusterRoles),
			check.Optional(snapshot.ClusterRoleBindings),
			check.Optional(snapshot.Deployments),
			check.Optional(snapshot.Nodes),
		},
		Rules: []check.Rule{
			{ID: "cluster-wide-readers", Summary: "DaemonSets allowed to list or watch pods, nodes, endpoints or Secrets cluster-wide, on many nodes",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.ClusterRoles, snapshot.ClusterRoleBindings}},
			{ID: "calico-without-typha", Summary: "calico-node on more than 50 nodes without Typha",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.Deployments}},
		},
		Cases: check.Cite(check.Prevents(
			"calico-node-full-resync-list-storm-eks-2021",
			"logging-daemonset-metadata-apiserver-flood-2020",
			"rancher-fleet-agent-secret-list-etcd-read-2023",
		), check.Detects("openai-telemetry-apiserver-overload-2024")),
		Run: runAPIHeavyNodeAgents,
	}
}

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

func readerFinding(ds *appsv1.DaemonSet, n int, how string, ix *rbacIndex, facts *agentFacts, calico fanInFact, typha *appsv1.Deployment) (finding.Finding, bool) {
	sa := serviceAccount(ds)
	want := append(slices.Clone(heavyResources), struct{ group, resource string }{"", "secrets"})
	grants := ix.reads(ds.Namespace, sa, want)
	if len(grants) == 0 {
		return finding.Finding{}, false
	}
	imgs := images(ds)
	logAgent := slices.ContainsFunc(imgs, func(i string) bool { return slices.Contains(logAgentImages, i) })
	var ev []string
	var items []finding.EvidenceItem
	var dsFields []finding.Field // further DaemonSet fields the judgement reads
	var used []grant
	ev = append(ev, how)
	var heavy []string
	for _, r := range heavyResources {
		if g, ok := grants[r.resource]; ok {
			heavy = append(heavy, r.resource)
			used = append(used, g)
			ev = append(ev, fmt.Sprintf("may list/watch %s cluster-wide: ClusterRole %s via ClusterRoleBinding %s", r.resource, g.role, g.binding))
		}
	}
	g, secrets := grants["secrets"]
	if secrets {
		used = append(used, g)
		ev = append(ev, fmt.Sprintf("may list/watch secrets cluster-wide: ClusterRole %s via ClusterRoleBinding %s", g.role, g.binding))
	}
	// Fan-in and kubelet mode take the pod reads off the API server.
	if isCalicoNode(ds, calico) && typha != nil {
		heavy = nil
		ev = append(ev, fmt.Sprintf("Typha runs (Deployment %s/%s): calico-node reads through it", typha.Namespace, typha.Name))
		items = append(items, typhaItem(typha, calico))
	}
	args := argsText(ds)
	for _, km := range facts.KubeletMode {
		if !slices.ContainsFunc(imgs, func(i string) bool { return slices.Contains(km.Images, i) }) {
			continue
		}
		if strings.Contains(strings.ToLower(args), strings.ToLower(km.Setting)) {
			heavy = slices.DeleteFunc(heavy, func(r string) bool { return r == "pods" })
			ev = append(ev, fmt.Sprintf("%s appears in the container arguments: pod metadata comes from the kubelet", km.Setting))
			dsFields = append(dsFields, argsWith(ds, km.Setting)...)
		} else {
			ev = append(ev, fmt.Sprintf("%s is not in the container arguments; it may be set in the agent's configuration file, "+
				"which kubegap does not read. %s", km.Setting, strings.TrimSpace(km.Fact)))
		}
	}
	// An agent told its own node's name (the downward API's spec.nodeName,
	// or a node-name flag) is wired the way a fieldSelector on
	// spec.nodeName needs: its pod and node reads are, most likely, of
	// its own node. RBAC cannot tell which, so those reads drop to low.
	// Log agents are left out: the cited floods came from their per-pod
	// metadata lookups, which a node name does not bound. So is
	// calico-node without Typha: it is told its node (NODENAME) and still
	// lists every pod of the cluster itself, the load Typha exists to
	// take (the fan-in fact of the data file).
	var perNode []string
	if wiring, fields := nodeNameWiring(ds); len(wiring) > 0 && !logAgent && !isCalicoNode(ds, calico) && len(heavy) > 0 {
		ev = append(ev, wiring...)
		dsFields = append(dsFields, fields...)
		heavy = slices.DeleteFunc(heavy, func(r string) bool {
			if r == "pods" || r == "nodes" {
				perNode = append(perNode, r)
				return true
			}
			return false
		})
	}
	sev, ok := finding.Info, false
	var cases []string
	var what []string
	if len(perNode) > 0 && n >= readersWarn {
		sev, ok = finding.Low, true
		what = append(what, strings.Join(perNode, ", "))
		cases = append(cases, "openai-telemetry-apiserver-overload-2024")
	}
	if len(heavy) > 0 && n >= readersWarn {
		sev, ok = finding.Medium, true
		if n >= readersHigh {
			sev = finding.High
		}
		what = append([]string{strings.Join(heavy, ", ")}, what...)
		if logAgent {
			cases = append(cases, "logging-daemonset-metadata-apiserver-flood-2020")
		}
		cases = append(cases, "openai-telemetry-apiserver-overload-2024")
		if isCalicoNode(ds, calico) {
			cases = append(cases, "calico-node-full-resync-list-storm-eks-2021")
		}
	}
	if secrets && n >= secretReadersWarn {
		ss := finding.Medium
		if n >= secretReadersHigh {
			ss = finding.High
		}
		sev, ok = max(sev, ss), true
		what = append(what, "secrets")
		cases = append(cases, "rancher-fleet-agent-secret-list-etcd-read-2023")
	}
	if !ok {
		return finding.Finding{}, false
	}
	slices.Sort(cases)
	cases = slices.Compact(cases)
	msg := fmt.Sprintf("Each of the %d copies of DaemonSet %s/%s runs as ServiceAccount %s, which may list and watch %s "+
		"across the whole cluster. If the agent does, the API server answers %d LISTs whose size grows with the "+
		"cluster, and all of them again whenever the agents restart or an API server fails over. RBAC shows what it "+
		"may do, not what it does.", n, ds.Namespace, ds.Name, sa, strings.Join(what, " and "), n)
	if len(perNode) > 0 {
		msg += fmt.Sprintf(" The agent is given its own node's name, the wiring a per-node field selector needs, so its "+
			"%s reads are likely of its own node only; that part is low.", strings.Join(perNode, " and "))
	}
	if len(ev) > check.MaxEvidence {
		ev = ev[:check.MaxEvidence]
	}
	out := finding.Finding{
		Check:    "api-heavy-node-agents",
		Severity: sev,
		Title:    fmt.Sprintf("DaemonSet %s/%s may list %s cluster-wide from %d nodes", ds.Namespace, ds.Name, strings.Join(what, " and "), n),
		Message:  msg,
		Objects:  []finding.ObjectRef{check.Ref("apps/v1", "DaemonSet", ds)},
		Remediation: "Make the agent read only its own node's objects (a fieldSelector on spec.nodeName, the kubelet's " +
			"API, or kubelet mode for log agents) or through a fan-in layer, narrow its ClusterRole to what it uses, " +
			"and give its ServiceAccount a FlowSchema with a bounded priority level so it cannot starve the rest of the " +
			"API server.",
		Cases: cases,
	}
	out.AddEvidence(daemonSetItem(ds, dsFields...))
	out.AddEvidence(grantItems(used)...)
	out.AddEvidence(items...)
	out.Evidence = append(out.Evidence, ev...)
	return out, true
}

// typhaItem quotes the Deployment taken for Typha: its Typha container's
// image when it was found by image, else its name.
func typhaItem(d *appsv1.Deployment, f fanInFact) finding.EvidenceItem {
	for _, c := range d.Spec.Template.Spec.Containers {
		if check.ImageName(c.Image) == f.FanInImage {
			return finding.Quote(check.Ref("apps/v1", "Deployment", d), finding.Value(check.ContainerField("Deployment", "", c.Name, "image"), c.Image))
		}
	}
	return finding.Quote(check.Ref("apps/v1", "Deployment", d), finding.Value("metadata.name", d.Name))
}

// argsWith quotes the command and argument elements of a DaemonSet's
// containers that contain setting (case-insensitive, as it is matched).
func argsWith(ds *appsv1.DaemonSet, setting string) []finding.Field {
	var out []finding.Field
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, list := range []struct {
			name string
			argv []string
		}{{"command", c.Command}, {"args", c.Args}} {
			for i, a := range list.argv {
				if strings.Contains(strings.ToLower(a), strings.ToLower(setting)) {
					out = append(out, finding.Value(check.ContainerField("DaemonSet", "", c.Name, fmt.Sprintf("%s[%d]", list.name, i)), a))
				}
			}
		}
	}
	return out
}

// nodeNameFlags are argument flags by which agents are told their node's
// name.
var nodeNameFlags = []string{"--node-name", "--nodename", "--node-id", "--nodeid", "--hostname-override"}

// nodeNameWiring says how a DaemonSet's containers are told the name of
// the node they run on: environment variables whose value comes from the
// downward API's spec.nodeName (the variable's name is structure; no value
// is read or printed), and node-name flags in the arguments. Empty when
// nothing in the template tells the agent its node.
func nodeNameWiring(ds *appsv1.DaemonSet) (text []string, fields []finding.Field) {
	for _, c := range ds.Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
				text = append(text, fmt.Sprintf("container %s: env %s is set from fieldRef spec.nodeName (its own node's name)", c.Name, e.Name))
				// The variable's source, never a value.
				fields = append(fields, finding.Value(check.ContainerField("DaemonSet", "", c.Name, "env[name="+e.Name+"].valueFrom.fieldRef.fieldPath"), "spec.nodeName"))
				break
			}
		}
	flags:
		for _, list := range []struct {
			name string
			argv []string
		}{{"command", c.Command}, {"args", c.Args}} {
			for i, a := range list.argv {
				flag, _, _ := strings.Cut(a, "=")
				if slices.Contains(nodeNameFlags, flag) {
					text = append(text, fmt.Sprintf("container %s: argument %s names its node", c.Name, flag))
					fields = append(fields, finding.Value(check.ContainerField("DaemonSet", "", c.Name, fmt.Sprintf("%s[%d]", list.name, i)), a))
					break flags
				}
			}
		}
	}
	return text, fields
}
