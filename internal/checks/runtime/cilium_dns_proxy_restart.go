package runtime

import (
	"fmt"
	"strings"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

const (
	ciliumDNSProxyID   = "cilium-dns-proxy-restart"
	ruleCiliumDNSRules = "dns-rules-behind-agent-restarts"
	caseCiliumDNSProxy = "cilium-dns-proxy-outage-on-agent-or-envoy-restart-2022-2025"
)

// ciliumDNSProxyRestartCheck finds Cilium policies with DNS rules: the
// pods they select send all their DNS through the DNS proxy on their node,
// which restarts with the cilium-agent, so every agent restart, each
// rolling upgrade among them, is a DNS outage for those pods.
func ciliumDNSProxyRestartCheck() check.Check {
	return check.Check{
		ID:       ciliumDNSProxyID,
		Title:    "Cilium DNS-aware policies whose pods lose DNS whenever the node's agent restarts",
		Severity: finding.Medium,
		Description: "A CiliumNetworkPolicy or CiliumClusterwideNetworkPolicy whose egress toPorts carry rules.dns (what " +
			"toFQDNs policies need) makes Cilium redirect the selected pods' DNS to the DNS proxy in the cilium-agent " +
			"(one report saw the queries forwarded to an Envoy pod). Users lost DNS while agents or Envoy restarted (a chart upgrade cost about a minute of " +
			"DNS on critical clusters) and when an API server upgrade left every agent's proxy not answering. Medium " +
			"when the cilium-agent DaemonSet runs and such policies exist, naming the policies; nothing when there is " +
			"no Cilium DaemonSet or no DNS rule. Cannot see: a standalone DNS proxy deployed beside the agent, which " +
			"kubegap does not recognise yet.",
		Reads: check.Needs(snapshot.DaemonSets, snapshot.CiliumNetworkPolicies, snapshot.CiliumClusterwideNetworkPolicies),
		Rules: []check.Rule{
			{ID: ruleCiliumDNSRules, Summary: "no Cilium policy with DNS rules in a cluster whose cilium-agent restarts take the DNS proxy down",
				Needs: []snapshot.Resource{snapshot.DaemonSets, snapshot.CiliumNetworkPolicies, snapshot.CiliumClusterwideNetworkPolicies}},
		},
		Cases: check.Prevents(caseCiliumDNSProxy),
		Run:   runCiliumDNSProxyRestart,
	}
}

func runCiliumDNSProxyRestart(ctx *check.Context) ([]finding.Finding, error) {
	s := ctx.Snapshot
	var agent *finding.ObjectRef
	var agentImage, agentContainer string
	for i := range s.DaemonSets {
		ds := &s.DaemonSets[i]
		for _, c := range ds.Spec.Template.Spec.Containers {
			if repo, _, _ := check.ImageParts(c.Image); strings.HasSuffix(repo, "cilium/cilium") {
				r := check.Ref("apps/v1", "DaemonSet", ds)
				agent, agentImage, agentContainer = &r, c.Image, c.Name
				break
			}
		}
		if agent != nil {
			break
		}
	}
	if agent == nil {
		if !ctx.Complete(snapshot.DaemonSets) {
			return nil, check.NotEvaluated("no cilium-agent DaemonSet in the input, and not every DaemonSet was read")
		}
		return nil, nil // no Cilium here
	}
	var policies []finding.EvidenceItem
	var objs []finding.ObjectRef
	count := 0
	for _, r := range []snapshot.Resource{snapshot.CiliumNetworkPolicies, snapshot.CiliumClusterwideNetworkPolicies} {
		if !ctx.Complete(r) {
			ctx.Incomplete(ruleCiliumDNSRules, "not every %s was read", r.Kind)
		}
		for _, p := range s.CustomObjects(r) {
			path, ok := dnsRulePath(p.Object)
			if !ok {
				continue
			}
			count++
			ref := finding.ObjectRef{APIVersion: "cilium.io/v2", Kind: r.Kind, Namespace: p.GetNamespace(), Name: p.GetName()}
			if len(objs) < check.MaxListedObjects {
				objs = append(objs, ref)
				policies = append(policies, finding.Quote(ref, finding.Value(path, finding.JSONText(dnsRulesAt(p.Object, path)))))
			}
		}
	}
	if count == 0 {
		return nil, nil
	}
	f := finding.Finding{
		Check: ciliumDNSProxyID, Rule: ruleCiliumDNSRules, Severity: finding.Medium, Cases: []string{caseCiliumDNSProxy},
		Objects: append([]finding.ObjectRef{*agent}, objs...),
		Title: fmt.Sprintf("%s route pods' DNS through the proxy of %s, which every agent restart takes down",
			check.Plural(count, "Cilium policy with DNS rules", "Cilium policies with DNS rules"), agent),
		Message: "Pods selected by these policies send every DNS query to the DNS proxy on their node, which lives in the " +
			"cilium-agent (one report saw them forwarded to an Envoy pod). While the agent restarts, as each rolling upgrade does on every node, " +
			"and until it has read the policies again, those queries fail or time out: a user lost DNS for about a minute " +
			"on critical clusters during a 1.17.1 to 1.17.3 chart upgrade and avoided it by removing rules.dns, and an API " +
			"server upgrade once left every agent's proxy not answering until liveness probes restarted them.",
		Remediation: "Before an agent upgrade or restart, check whether each rules.dns block is needed (removing them is " +
			"what avoided the loss in cilium/cilium issue 39391); roll the cilium DaemonSet slowly where they remain, and " +
			"watch DNS errors of the selected pods during the rollout. Cilium contributors have proposed a standalone, high-availability DNS " +
			"proxy (cilium/cilium issue 30984); read your release's documentation for it.",
	}
	f.AddEvidence(finding.Quote(*agent, finding.Value("spec.template.spec.containers[name="+agentContainer+"].image", agentImage)))
	f.AddEvidence(policies...)
	return []finding.Finding{f}, nil
}

// dnsRulePath finds the first egress toPorts entry with DNS rules in a
// Cilium policy's spec (or one of its specs) and returns its field path.
func dnsRulePath(obj map[string]any) (string, bool) {
	specs := []string{"spec"}
	if list, ok := obj["specs"].([]any); ok {
		specs = nil
		for i := range list {
			specs = append(specs, fmt.Sprintf("specs[%d]", i))
		}
	}
	for _, sp := range specs {
		spec := lookupPath(obj, sp)
		egress, _ := spec["egress"].([]any)
		for i, e := range egress {
			em, _ := e.(map[string]any)
			ports, _ := em["toPorts"].([]any)
			for j, tp := range ports {
				tpm, _ := tp.(map[string]any)
				rules, _ := tpm["rules"].(map[string]any)
				if dns, ok := rules["dns"].([]any); ok && len(dns) > 0 {
					return fmt.Sprintf("%s.egress[%d].toPorts[%d].rules.dns", sp, i, j), true
				}
			}
		}
	}
	return "", false
}

// lookupPath resolves "spec" or "specs[N]" in obj.
func lookupPath(obj map[string]any, p string) map[string]any {
	if p == "spec" {
		m, _ := obj["spec"].(map[string]any)
		return m
	}
	var n int
	if _, err := fmt.Sscanf(p, "specs[%d]", &n); err != nil {
		return nil
	}
	list, _ := obj["specs"].([]any)
	if n >= len(list) {
		return nil
	}
	m, _ := list[n].(map[string]any)
	return m
}

// dnsRulesAt returns the DNS rules at a path dnsRulePath found.
func dnsRulesAt(obj map[string]any, path string) any {
	var sp string
	var i, j int
	head, rest, _ := strings.Cut(path, ".egress[")
	sp = head
	if _, err := fmt.Sscanf(rest, "%d].toPorts[%d].rules.dns", &i, &j); err != nil {
		return nil
	}
	spec := lookupPath(obj, sp)
	egress, _ := spec["egress"].([]any)
	em, _ := egress[i].(map[string]any)
	ports, _ := em["toPorts"].([]any)
	tpm, _ := ports[j].(map[string]any)
	rules, _ := tpm["rules"].(map[string]any)
	return rules["dns"]
}
