package availability

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

//go:embed data/descheduler-evicts-cordoned.yaml
var deschedulerYAML []byte

var loadDescheduler = check.Facts[check.Statements]("descheduler facts", deschedulerYAML)

const (
	deschedulerID       = "descheduler-evicts-cordoned"
	ruleEvictsCordoned  = "evicts-cordoned"
	caseMoJDescheduler  = "moj-cloud-platform-eks-130-upgrade-descheduler-cordoned-nodes-2025"
	taintsPlugin        = "RemovePodsViolatingNodeTaints"
	unschedulableTaint  = "node.kubernetes.io/unschedulable"
	deschedulerPolicyKy = "policy.yaml"
)

// deschedulerConfigMaps are the policy ConfigMaps kubegap reads by name:
// the Helm chart's with the release named descheduler, and the plain
// manifests' (see the data file). Each is in snapshot.NamedConfigMaps.
var deschedulerConfigMaps = []string{"kube-system/descheduler", "kube-system/descheduler-policy-configmap"}

func deschedulerEvictsCordonedCheck() check.Check {
	return check.Check{
		ID:       deschedulerID,
		Title:    "A descheduler policy that evicts the pods of cordoned nodes",
		Severity: finding.High,
		Description: "Reads the descheduler's policy ConfigMap (kube-system/descheduler, the Helm chart's with the " +
			"release named descheduler, or kube-system/descheduler-policy-configmap, the plain manifests') and " +
			"flags a policy that enables RemovePodsViolatingNodeTaints without excluding the " +
			"node.kubernetes.io/unschedulable taint: every cordoned node then has its pods evicted by the " +
			"descheduler, all at once, as soon as a node upgrade cordons nodes. Medium without nodeFit, low with " +
			"it (pods are evicted only when another node could take them), high when nodes are cordoned right " +
			"now and nodeFit is off. Each policy version is read as the descheduler reads it: a v1alpha2 policy " +
			"ignores v1alpha1 strategies, so values written for an old chart that turn the strategy off do not " +
			"stop the chart's default profile, which turns it on. A descheduler Deployment or CronJob whose " +
			"policy is under another name is reported as not judged.",
		// Nodes only raise a finding's severity (cordoned now): no silence
		// depends on them, and a finding that they might raise says so.
		Reads: append(check.Needs(snapshot.ConfigMaps), check.Optional(snapshot.Nodes), check.Optional(snapshot.Deployments),
			check.Optional(snapshot.CronJobs)),
		Rules: []check.Rule{
			{ID: ruleEvictsCordoned, Summary: "Descheduler policies that evict pods from cordoned nodes",
				Needs: []snapshot.Resource{snapshot.ConfigMaps, snapshot.Deployments, snapshot.CronJobs}},
		},
		Cases: check.Prevents(caseMoJDescheduler),
		Run:   runDeschedulerEvictsCordoned,
	}
}

// deschedulerPolicy is a DeschedulerPolicy in either version: v1alpha1
// strategies, or v1alpha2 profiles of plugins.
type deschedulerPolicy struct {
	APIVersion string `json:"apiVersion"`
	Strategies map[string]struct {
		Enabled bool           `json:"enabled"`
		Params  map[string]any `json:"params"`
	} `json:"strategies"`
	Profiles []struct {
		Name         string `json:"name"`
		PluginConfig []struct {
			Name string         `json:"name"`
			Args map[string]any `json:"args"`
		} `json:"pluginConfig"`
		Plugins struct {
			Deschedule struct {
				Enabled []string `json:"enabled"`
			} `json:"deschedule"`
		} `json:"plugins"`
	} `json:"profiles"`
}

// evictsCordoned is one profile (or the v1alpha1 strategy) that evicts
// from cordoned nodes.
type evictsCordoned struct {
	where   string
	nodeFit bool
}

// taintArgsEvictCordoned reports whether RemovePodsViolatingNodeTaints'
// arguments leave the unschedulable taint in play. The plugin matches an
// excluded entry by key, or by key=value for a non-empty value; the
// unschedulable taint has none.
func taintArgsEvictCordoned(args map[string]any) bool {
	has := func(field string) (bool, bool) {
		list, ok := args[field].([]any)
		if !ok {
			return false, false
		}
		return slices.ContainsFunc(list, func(v any) bool { return v == unschedulableTaint }), true
	}
	if excluded, _ := has("excludedTaints"); excluded {
		return false
	}
	if included, set := has("includedTaints"); set && !included {
		return false
	}
	return true
}

func argBool(args map[string]any, key string) bool {
	b, _ := args[key].(bool)
	return b
}

// Policy versions: the descheduler reads only the part of a policy its
// apiVersion defines and ignores the rest (v0.31.0 dropped v1alpha1).
const (
	policyV1alpha1 = "descheduler/v1alpha1"
	policyV1alpha2 = "descheduler/v1alpha2"
)

// ignoredStrategies reports whether a v1alpha2 policy carries v1alpha1
// strategies, which the descheduler does not read: values written for an
// older chart, while the chart's own default profiles apply.
func (p *deschedulerPolicy) ignoredStrategies() bool {
	return p.APIVersion == policyV1alpha2 && len(p.Strategies) > 0
}

func (p *deschedulerPolicy) evicting() []evictsCordoned {
	var out []evictsCordoned
	if s, ok := p.Strategies[taintsPlugin]; ok && p.APIVersion != policyV1alpha2 && s.Enabled && taintArgsEvictCordoned(s.Params) {
		out = append(out, evictsCordoned{"strategy " + taintsPlugin, argBool(s.Params, "nodeFit")})
	}
	if p.APIVersion == policyV1alpha1 {
		return out
	}
	for _, pr := range p.Profiles {
		if !slices.Contains(pr.Plugins.Deschedule.Enabled, taintsPlugin) {
			continue
		}
		var args map[string]any
		nodeFit := false
		for _, pc := range pr.PluginConfig {
			switch pc.Name {
			case taintsPlugin:
				args = pc.Args
			case "DefaultEvictor":
				nodeFit = argBool(pc.Args, "nodeFit")
			}
		}
		if taintArgsEvictCordoned(args) {
			out = append(out, evictsCordoned{"profile " + pr.Name, nodeFit})
		}
	}
	return out
}

// deschedulerWorkloads names the Deployments and CronJobs that run the
// descheduler image.
func deschedulerWorkloads(s *snapshot.Snapshot) []finding.ObjectRef {
	isDescheduler := func(cs []corev1.Container) bool {
		// By index: ContainsFunc copied each whole container to read its image.
		for j := range cs {
			if check.ImageName(cs[j].Image) == "descheduler" {
				return true
			}
		}
		return false
	}
	var out []finding.ObjectRef
	for i := range s.Deployments {
		if d := &s.Deployments[i]; isDescheduler(d.Spec.Template.Spec.Containers) {
			out = append(out, check.Ref("apps/v1", "Deployment", d))
		}
	}
	for i := range s.CronJobs {
		if c := &s.CronJobs[i]; isDescheduler(c.Spec.JobTemplate.Spec.Template.Spec.Containers) {
			out = append(out, check.Ref("batch/v1", "CronJob", c))
		}
	}
	return out
}

func cordonedNodes(s *snapshot.Snapshot) []*corev1.Node {
	var out []*corev1.Node
	for i := range s.Nodes {
		if s.Nodes[i].Spec.Unschedulable {
			out = append(out, &s.Nodes[i])
		}
	}
	return out
}

// isKey reports whether one of keys is namespace/name, without joining
// the two per object.
func isKey(keys []string, namespace, name string) bool {
	for _, k := range keys {
		if len(k) == len(namespace)+1+len(name) && k[len(namespace)] == '/' &&
			k[:len(namespace)] == namespace && k[len(namespace)+1:] == name {
			return true
		}
	}
	return false
}

func runDeschedulerEvictsCordoned(ctx *check.Context) ([]finding.Finding, error) {
	facts, err := loadDescheduler()
	if err != nil {
		return nil, err
	}
	s := ctx.Snapshot
	workloads := deschedulerWorkloads(s)
	policies := 0
	var out []finding.Finding
	for i := range s.ConfigMaps {
		cm := &s.ConfigMaps[i]
		if !isKey(deschedulerConfigMaps, cm.Namespace, cm.Name) {
			continue
		}
		policies++
		var p deschedulerPolicy
		if err := yaml.Unmarshal([]byte(cm.Data[deschedulerPolicyKy]), &p); err != nil {
			ctx.Incomplete(ruleEvictsCordoned, "ConfigMap %s/%s: %s is not a policy kubegap can read: %v", cm.Namespace, cm.Name, deschedulerPolicyKy, err)
			continue
		}
		if ev := p.evicting(); len(ev) > 0 {
			f := deschedulerFinding(cm, &p, ev, workloads, cordonedNodes(s), facts)
			if f.Severity == finding.Medium && !ctx.Complete(snapshot.Nodes) {
				ctx.Incomplete(ruleEvictsCordoned, "ConfigMap %s/%s: nodes were not read completely, and the finding is high if a node is cordoned now",
					cm.Namespace, cm.Name)
			}
			out = append(out, f)
		}
	}
	switch {
	case !ctx.Complete(snapshot.ConfigMaps):
		ctx.Incomplete(ruleEvictsCordoned, "the descheduler policy ConfigMaps (%s) were not read completely", strings.Join(deschedulerConfigMaps, ", "))
	case policies == 0 && len(workloads) > 0:
		ctx.Incomplete(ruleEvictsCordoned, "%s %s runs the descheduler, but its policy is in none of the ConfigMaps kubegap reads (%s)",
			workloads[0].Kind, workloads[0].Namespace+"/"+workloads[0].Name, strings.Join(deschedulerConfigMaps, ", "))
	case policies == 0 && (!ctx.Complete(snapshot.Deployments) || !ctx.Complete(snapshot.CronJobs)):
		ctx.Incomplete(ruleEvictsCordoned, "no descheduler policy ConfigMap, and Deployments or CronJobs were not read completely: a descheduler with its policy under another name would not be seen")
	}
	return out, nil
}

func deschedulerFinding(cm *corev1.ConfigMap, p *deschedulerPolicy, ev []evictsCordoned, workloads []finding.ObjectRef,
	cordoned []*corev1.Node, facts *check.Statements) finding.Finding {
	sev := finding.Low
	var where []string
	for _, e := range ev {
		where = append(where, fmt.Sprintf("%s (nodeFit %v)", e.where, e.nodeFit))
		if !e.nodeFit {
			sev = finding.Medium
		}
	}
	evidence := []string{fmt.Sprintf("ConfigMap %s/%s %s: %s enabled without excluding %s in %s",
		cm.Namespace, cm.Name, deschedulerPolicyKy, taintsPlugin, unschedulableTaint, strings.Join(where, ", "))}
	if p.ignoredStrategies() {
		evidence = append(evidence, "the policy is "+policyV1alpha2+" but also carries v1alpha1 strategies, which the "+
			"descheduler ignores: settings there (a strategy turned off) do not apply, the profiles do")
	}
	objs := append([]finding.ObjectRef{check.Ref("v1", "ConfigMap", cm)}, workloads...)
	if len(cordoned) > 0 {
		refs, more := check.NodeRefs(cordoned)
		evidence = append(evidence, fmt.Sprintf("%s cordoned now%s", check.Plural(len(cordoned), "node is", "nodes are"), check.MoreText(more)))
		if sev == finding.Medium {
			sev = finding.High
			objs = append(objs, refs...)
		}
	}
	evidence = append(evidence, facts.Evidence()...)
	f := finding.Finding{
		Check: deschedulerID, Rule: ruleEvictsCordoned, Severity: sev,
		Title: "The descheduler evicts the pods of every cordoned node",
		Message: "The descheduler's policy enables " + taintsPlugin + " and leaves the taint that cordoning adds in " +
			"play, so each run evicts every pod on every cordoned node. A node upgrade that cordons many nodes " +
			"before their replacements are ready turns this into a cluster-wide eviction with nowhere to go.",
		Objects: objs, Evidence: evidence,
		Remediation: "Add " + unschedulableTaint + " to the plugin's excludedTaints (descheduler v0.24.0 or later), " +
			"turn on nodeFit in the DefaultEvictor, or scale the descheduler to zero while nodes are upgraded.",
		Cases: []string{caseMoJDescheduler},
	}
	f.AddEvidence(check.NodeValues(cordoned, func(*corev1.Node) []finding.Field {
		return []finding.Field{finding.Value("spec.unschedulable", true)}
	})...)
	return f
}
