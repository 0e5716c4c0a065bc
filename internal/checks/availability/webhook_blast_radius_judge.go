package availability

// webhook-blast-radius: one webhook judged against its failure policy, scope,
// timeout and backend, for every rule at once.

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/kubegap/kubegap/internal/check"
	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/snapshot"
)

// judge decides whether one webhook is a risk, and how much.
func (env *webhookEnv) judge(res snapshot.Resource, cfgName string, w *webhookEntry, refs *check.CappedRefs) (webhookVerdict, bool) {
	podsCreate, allResources, ruleText := webhookScope(w.rules)
	if objectSelectorOptIn(w.objSel) {
		// Only objects carrying a label are sent: an opt-in webhook.
		return webhookVerdict{}, false
	}
	if !podsCreate && !allResources {
		return env.judgeServiceWrites(res, cfgName, w, refs)
	}
	path := fmt.Sprintf("%s %s webhooks[%d] (%s)", res.Kind, cfgName, w.index, w.name)
	var v webhookVerdict
	v.items = append(v.items, finding.Quote(finding.ObjectRef{APIVersion: res.APIVersion(), Kind: res.Kind, Name: cfgName}, webhookFields(*w)...))

	defaults, defaultNote := env.facts.defaultsFor(w.apiVersion)
	policy, policyImplied := defaults.FailurePolicy, true
	if w.failurePolicy != nil {
		policy, policyImplied = *w.failurePolicy, false
	}
	timeout, timeoutImplied := defaults.TimeoutSeconds, true
	if w.timeout != nil {
		timeout, timeoutImplied = *w.timeout, false
	}
	implied := func(b bool) string {
		if b {
			return defaultNote
		}
		return ""
	}
	fail := policy == admissionv1.Fail
	v.evidence = append(v.evidence, fmt.Sprintf("%s rules cover %s", path, ruleText))
	v.evidence = append(v.evidence, fmt.Sprintf("%s failurePolicy=%s%s", path, policy, implied(policyImplied)))

	// matchConditions narrow what is sent. One that lets system identities
	// through spares the controllers, so the cluster keeps healing; others
	// (CEL kubegap does not evaluate) make the scope unknown, not all.
	exempt, exempts := env.facts.exempting(w.matchConditions)
	for _, mc := range w.matchConditions {
		v.evidence = append(v.evidence, fmt.Sprintf("%s matchConditions[%s].expression=%q", path, mc.Name, mc.Expression))
	}

	// Namespace exclusion: kube-system, then the webhook's own namespace.
	// ks is whether every critical namespace is excluded: no as soon as
	// one is not.
	ksNS := strings.Join(env.facts.CriticalNamespaces, ", ")
	ks := triYes
	for _, ns := range env.facts.CriticalNamespaces {
		switch env.excluded(w, ns) {
		case triNo:
			ks = triNo
		case triUnknown:
			if ks == triYes {
				ks = triUnknown
			}
		}
	}
	v.critical = fail && ks != triYes && !exempts
	v.kubeSystemCovered = fail && ks == triNo && !exempts
	ownNS := ""
	own := triYes
	if w.clientConfig.Service != nil {
		ownNS = w.clientConfig.Service.Namespace
		own = env.excluded(w, ownNS)
	}
	v.evidence = append(v.evidence, fmt.Sprintf("%s namespaceSelector=%s: %s %s", path, selectorText(w.nsSel), ksNS, triText(ks, "excluded", "not excluded", "exclusion unknown")))
	if ownNS != "" && !slices.Contains(env.facts.CriticalNamespaces, ownNS) {
		v.evidence = append(v.evidence, fmt.Sprintf("%s own namespace %s %s", path, ownNS, triText(own, "excluded", "not excluded", "exclusion unknown")))
	}
	if fail && ks == triUnknown && !exempts {
		env.ctx.Incomplete(webhookRuleCritical, "whether %s covers %s is unknown", path, ksNS)
	}

	readyMax, backendText := env.backend(path, w, fail, webhookRuleBackend, refs, &v)
	spof := readyMax >= 0 && readyMax < webhookMinReady
	var policies []string
	if fail {
		v.policyBlocked, policies = env.policyBlockedBackend(w)
	}

	covers := "pod creation"
	if allResources {
		covers = "the creation of every resource"
	}
	if len(w.matchConditions) > 0 {
		covers += fmt.Sprintf(" (the requests its %d matchCondition%s admit)", len(w.matchConditions), check.PluralS(len(w.matchConditions)))
	}
	what := fmt.Sprintf("failurePolicy %s on %s", policy, covers)
	scopeText := "in every namespace including " + ksNS
	switch ks {
	case triYes:
		scopeText = "outside " + ksNS
	case triUnknown:
		scopeText = "in namespaces that may include " + ksNS + " (its selector depends on namespace labels that were not read, or matchConditions may skip it)"
	}
	switch {
	case v.policyBlocked:
		v.sev = finding.High
		for _, n := range policies {
			ns, name, _ := strings.Cut(n, "/")
			refs.Add(check.ResourceRef(snapshot.NetworkPolicies, ns, name))
		}
		v.evidence = append(v.evidence, fmt.Sprintf("%s selects the backend pods for Ingress; no ingress rule admits every source on the webhook's target port, and none has an ipBlock peer", policyText(policies)))
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s selects its backend pods and admits ingress only from pods, which shuts out the API server "+
			"(it calls webhooks from the control plane, not from a pod; only an API server on a backend pod's own node, whose "+
			"traffic a NetworkPolicy cannot block, still gets through): its calls fail now, whatever the backend's health (%s)", what, scopeText, policyText(policies), backendText))
	case fail && ks == triNo && spof:
		v.sev = finding.High
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s, so one pod failure stops pod creation across the cluster, %s's own pods included", what, scopeText, backendText, ksNS))
	case fail && readyMax == 0:
		v.sev = finding.High
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s, so it rejects every call it receives now", what, scopeText, backendText))
	case fail && ks == triNo:
		v.sev = finding.Medium
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s: a backend outage (a bad release, an expired certificate, a node pool upgrade) stops %s's pods too", what, scopeText, ksNS))
	case fail && spof:
		v.sev = finding.Medium
		v.reasons = append(v.reasons, fmt.Sprintf("%s %s, and %s: a single point of failure", what, scopeText, backendText))
	case fail && own == triNo:
		v.sev = finding.Low
		v.reasons = append(v.reasons, fmt.Sprintf("%s does not exclude its own namespace %s: if all its pods are lost, none can be created again until the webhook is removed", what, ownNS))
	}
	// A long timeout alone matters where the webhook gates critical pods;
	// the API default of 10 s is too common elsewhere to be worth a finding.
	if timeout > webhookLongTimeout && (v.sev > finding.Info || ks != triYes) {
		if v.sev == finding.Info {
			v.sev = finding.Low
		}
		v.reasons = append(v.reasons, fmt.Sprintf("timeoutSeconds is %d%s, so each covered request can wait that long when the backend hangs", timeout, implied(timeoutImplied)))
		v.evidence = append(v.evidence, fmt.Sprintf("%s timeoutSeconds=%d%s", path, timeout, implied(timeoutImplied)))
		v.slow = true
	}
	if v.sev == finding.Info {
		return webhookVerdict{}, false
	}
	v.allResources = fail && allResources
	v.selfBlock = fail && own == triNo
	if fail && v.sev > finding.Low && own == triNo && !slices.Contains(env.facts.CriticalNamespaces, ownNS) {
		v.reasons = append(v.reasons, fmt.Sprintf("its own namespace %s is not excluded either, so its pods cannot come back while it is down", ownNS))
	}
	if exempts && v.sev > finding.Low {
		// Controllers create pods as system identities: the webhook never
		// sees their requests, so an outage stops only direct creations,
		// whose authors see the error.
		v.sev = finding.Low
		v.critical = false
		v.reasons = append(v.reasons, fmt.Sprintf("its matchCondition %s (%s) lets requests of system users through, controllers among them, so an outage stops only pods created directly by people and pipelines, who see the error",
			exempt.Name, exempt.Expression))
	}
	return v, true
}

func triText(t tri, yes, no, unknown string) string {
	switch t {
	case triYes:
		return yes
	case triNo:
		return no
	default:
		return unknown
	}
}

func listText(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		if s == "" {
			s = `""`
		}
		q[i] = s
	}
	return "[" + strings.Join(q, ",") + "]"
}
